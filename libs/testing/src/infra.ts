/**
 * Test infrastructure on the real servers: a fresh database and a fresh NATS namespace
 * per test file, dropped afterwards (the database copied from the run's template, see
 * template.ts). Names carry the run id (which carries its start
 * time), so concurrent runs never collide and leftovers of crashed runs are recognised
 * and removed by later runs once they are old.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { superuserAuth } from './bus-auth';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
/** The launcher's own NATS (with an operator), not a machine's anonymous one on 4222. */
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:14222';
export const DEFAULT_RSPAMD_URL = 'http://127.0.0.1:11333';
const PREFIX = 'mrt';
const STALE_MS = 3 * 3_600_000;

export interface ServerUrls {
  databaseUrl: string;
  natsUrl: string;
  rspamdUrl: string;
}

export function serverUrls(env: NodeJS.ProcessEnv = process.env): ServerUrls {
  return {
    databaseUrl: env.TEST_DATABASE_URL ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    natsUrl: env.TEST_NATS_URL ?? env.NATS_URL ?? DEFAULT_NATS_URL,
    rspamdUrl: env.TEST_RSPAMD_URL ?? env.RSPAMD_URL ?? DEFAULT_RSPAMD_URL,
  };
}

/** A server URL fit for a message or a log: its password, if any, masked. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}

/** `mrt<base36 ms><4 hex>`: sortable by age, unique per run. */
export function newRunId(now = Date.now()): string {
  return `${PREFIX}${now.toString(36)}${randomBytes(2).toString('hex')}`;
}

export function runAgeMs(name: string, now = Date.now()): number | undefined {
  const m = /^mrt([0-9a-z]{8,9})[0-9a-f]{4}/.exec(name);
  if (!m) return undefined;
  return now - Number.parseInt(m[1]!, 36);
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new database, empty or a copy of `template` (which nobody may be connected to meanwhile). */
export async function createDatabase(databaseUrl: string, name: string, template?: string): Promise<string> {
  await adminQuery(databaseUrl, (c) => c.query(`create database "${name}"${template ? ` template "${template}"` : ''}`));
  return withDatabase(databaseUrl, name);
}

export async function dropDatabases(databaseUrl: string, match: (name: string) => boolean): Promise<string[]> {
  return adminQuery(databaseUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>(`select datname from pg_database where datname like '${PREFIX}%'`);
    const dropped: string[] = [];
    for (const { datname } of rows) {
      if (!match(datname)) continue;
      await c.query(`drop database if exists "${datname}" with (force)`);
      dropped.push(datname);
    }
    return dropped;
  });
}

/** Deletes streams (and KV buckets) whose names start with one of our run prefixes and match. */
export async function deleteStreams(natsUrl: string, match: (name: string) => boolean): Promise<string[]> {
  const nc = await connect({ servers: natsUrl.split(','), name: 'mailroom-test-cleanup', ...(await superuserAuth()) });
  try {
    const jsm = await jetstreamManager(nc);
    const deleted: string[] = [];
    for await (const name of jsm.streams.names()) {
      // KV buckets and object stores live in streams named KV_<bucket> and OBJ_<bucket>.
      const bare = name.replace(/^(KV|OBJ)_/, '');
      if (!bare.startsWith(PREFIX) || !match(bare)) continue;
      await jsm.streams.delete(name).catch(() => false);
      deleted.push(name);
    }
    return deleted;
  } finally {
    await nc.close();
  }
}

export async function dropStale(urls = serverUrls()): Promise<void> {
  const stale = (name: string) => (runAgeMs(name) ?? 0) > STALE_MS;
  await dropDatabases(urls.databaseUrl, stale);
  await deleteStreams(urls.natsUrl, stale);
}

export async function reachable(urls = serverUrls()): Promise<{ postgres: boolean; nats: boolean; rspamd: boolean }> {
  const postgres = await adminQuery(urls.databaseUrl, (c) => c.query('select 1')).then(
    () => true,
    () => false,
  );
  const nats = await connect({ servers: urls.natsUrl.split(','), timeout: 2_000, maxReconnectAttempts: 0, ...(await superuserAuth()) }).then(
    async (nc) => {
      await nc.close();
      return true;
    },
    () => false,
  );
  const rspamd = await fetch(new URL('/ping', urls.rspamdUrl), { signal: AbortSignal.timeout(2_000) }).then(
    async (res) => res.ok && (await res.text()).trim() === 'pong',
    () => false,
  );
  return { postgres, nats, rspamd };
}
