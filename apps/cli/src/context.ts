/** What every command shares: the SDK client from the resolved credentials, and how to print. */
import { Mailroom } from '@mailroom/sdk';
import { InvalidArgumentError, type Command } from 'commander';
import { configDir, configFile, readConfig, resolveCredentials } from './config';
import { formatRecord, formatTable } from './domain/table';

export const isJson = (cmd: Command): boolean => Boolean((cmd.optsWithGlobals() as { json?: boolean }).json);

export function client(): Mailroom {
  const { apiKey, baseUrl } = resolveCredentials(process.env, readConfig(configFile(configDir(process.env))));
  return new Mailroom({ env: {}, ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) });
}

/** A list: a JSON array with --json, a table of the given columns otherwise. */
export function printList(cmd: Command, items: readonly unknown[], columns: readonly string[]): void {
  process.stdout.write(`${isJson(cmd) ? JSON.stringify(items, null, 2) : formatTable(items as Record<string, unknown>[], columns)}\n`);
}

/** One record: a JSON object with --json, "field  value" lines otherwise. */
export function printRecord(cmd: Command, record: unknown, long: readonly string[] = []): void {
  process.stdout.write(`${isJson(cmd) ? JSON.stringify(record, null, 2) : formatRecord((record ?? {}) as Record<string, unknown>, long)}\n`);
}

/** A command that answers nothing (a delete): `{ "ok": true, ... }` with --json, a line otherwise. */
export function printDone(cmd: Command, what: string, fields: Record<string, unknown>): void {
  process.stdout.write(isJson(cmd) ? `${JSON.stringify({ ok: true, ...fields })}\n` : `${what}\n`);
}

/** The items of a paged list, page after page, until `limit` items (or all with limit Infinity). */
export async function collect<Item>(mr: Mailroom, limit: number, page: (token: string | undefined, size: number) => Promise<{ data: { data: Item[]; next_page_token: string | null } }>): Promise<Item[]> {
  const items: Item[] = [];
  const size = Math.min(100, limit);
  for await (const item of mr.paginate((token) => page(token, size))) {
    items.push(item);
    if (items.length >= limit) break;
  }
  return items;
}

/** --limit: a positive whole number, or "all". */
export function parseLimit(value: string): number {
  if (value === 'all') return Number.POSITIVE_INFINITY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`--limit must be a positive whole number or "all", not ${value}`);
  return n;
}

/** A command line that cannot work (a missing secret): exit code 1, its message shown. */
export class UsageError extends Error {}
