/**
 * PostgreSQL refuses to run as root, and rspamd wants a user to drop to. As root, the
 * launcher runs them in a user namespace where it is `nobody` (util-linux's `unshare`): no
 * system user is created, and their files stay root's outside. Where user namespaces are
 * not available, they run as the `nobody` user itself, which must then own their data.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const NOBODY = 65534;

export type Unprivileged =
  | { kind: 'as-is' }
  | { kind: 'user-namespace'; prefix: string[] }
  | { kind: 'nobody'; uid: number; gid: number };

export function unprivileged(): Unprivileged {
  if (process.getuid?.() !== 0) return { kind: 'as-is' };
  const prefix = ['unshare', '--user', `--map-user=${NOBODY}`, `--map-group=${NOBODY}`, '--'];
  const probe = spawnSync(prefix[0]!, [...prefix.slice(1), 'true'], { stdio: 'ignore' });
  if (probe.status === 0) return { kind: 'user-namespace', prefix };
  return { kind: 'nobody', uid: NOBODY, gid: NOBODY };
}

/** The command line to run, and the user to run it as. */
export function command(how: Unprivileged, argv: string[]): { argv: string[]; uid?: number; gid?: number } {
  if (how.kind === 'user-namespace') return { argv: [...how.prefix, ...argv] };
  if (how.kind === 'nobody') return { argv, uid: how.uid, gid: how.gid };
  return { argv };
}

/** Makes `dir` (recursively) the unprivileged user's, where that user is a real one. */
export function handOver(how: Unprivileged, dir: string): void {
  if (how.kind !== 'nobody') return;
  const walk = (path: string) => {
    chownSync(path, how.uid, how.gid);
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(dir);
}
