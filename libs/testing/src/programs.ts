/**
 * Finding the programs a test runs itself (nats-server, openssl). A missing one fails the
 * test with what to install: a test that skipped would pass on a machine that proves nothing.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, then in `fallbacks` (absolute paths); throws `install` when none. */
export function findProgram(name: string, opts: { fallbacks?: string[]; install: string; env?: NodeJS.ProcessEnv }): string {
  const dirs = (opts.env ?? process.env).PATH?.split(delimiter).filter(Boolean) ?? [];
  const found = [...dirs.map((d) => join(d, name)), ...(opts.fallbacks ?? [])].find(executable);
  if (!found) throw new Error(`${name} not found on PATH${opts.fallbacks?.length ? ` nor at ${opts.fallbacks.join(', ')}` : ''}: ${opts.install}`);
  return found;
}
