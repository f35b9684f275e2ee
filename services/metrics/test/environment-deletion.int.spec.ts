/**
 * A deleted environment against the real server: whichever of a counting and the deletion
 * starts first, no row of the environment is left once both committed. Each interleaving is
 * forced: one side holds its transaction open until the server shows the other waiting for
 * its lock (libs/runtime deleted-environments.ts).
 */
import path from 'node:path';
import { newId, type EventEnvelope } from '@mailroom/contracts';
import { sql, transactor, withTransaction, type Kysely } from '@mailroom/db';
import { DeletedEnvironments } from '@mailroom/runtime';
import { createTestContext, migratedDb, waitFor, type TestContext } from '@mailroom/testing';
import type { InboxDomainsPort } from '../src/domain/inbox-domains';
import type { Transact } from '../src/domain/ports';
import { Rollups } from '../src/domain/rollups';
import { RollupRepository } from '../src/repo/rollup.repository';
import type { MetricsDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MetricsDb>;
const org = newId('organization');

beforeAll(async () => {
  ctx = await createTestContext({}, { bus: 'empty' });
  db = await migratedDb<MetricsDb>(ctx, { schema: 'metrics', migrationsDir: path.join(__dirname, '..', 'migrations'), max: 4 });
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const sent = (envId: string): EventEnvelope => ({
  id: newId('event'),
  type: 'message.sent',
  timestamp: new Date().toISOString(),
  org_id: org,
  env_id: envId,
  data: { message_id: newId('message'), thread_id: newId('thread'), inbox_id: 'inb_a', from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', provider_message_id: 'p', sent_at: new Date().toISOString() },
});
const deletion = (envId: string) => ({ org_id: org, env_id: envId, deleted_at: new Date().toISOString() });

/** What mailbox and domains would say of inb_a (this test runs no other service): on no custom domain. */
const domains: InboxDomainsPort = { domainOf: async () => null };

/** Rollups whose transactions wait for `held` before they commit (none: at once). */
function rollups(held?: Promise<void>): Rollups {
  if (!held) return new Rollups({ transact: transactor(db), store: new RollupRepository(db), tombstones: new DeletedEnvironments<MetricsDb>(), domains });
  const transact: Transact = (work) =>
    withTransaction(db, async (tx) => {
      const result = await work(tx);
      await held;
      return result;
    });
  return new Rollups({ transact, store: new RollupRepository(db), tombstones: new DeletedEnvironments<MetricsDb>(), domains });
}

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

/** Whether a transaction of this database is open between statements (one held by a gate). */
async function someoneHolds(): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'idle in transaction'`.execute(db);
  return (rows[0]?.n ?? 0) > 0;
}

/** Whether a statement of this database waits for a lock now. */
async function someoneWaits(): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
  return (rows[0]?.n ?? 0) > 0;
}

const rowsOf = async (envId: string) =>
  (await sql<{ n: number }>`select (select count(*) from hourly_counts where env_id = ${envId}) + (select count(*) from hourly_latency where env_id = ${envId}) as n`.execute(db)).rows[0]!.n;

it('deletes the rows of a counting in flight when the deletion starts: the deletion waits for its commit', async () => {
  const env = newId('environment');
  const kept = newId('environment');
  await rollups().record([sent(kept)]);
  const g = gate();
  const counting = rollups(g.opened).record([sent(env)]);
  // The counting has read the deleted environments and added its rows; it has not committed.
  await waitFor(someoneHolds, { timeoutMs: 5_000, what: 'the counting to hold its transaction' });
  const deleting = rollups().environmentDeleted(deletion(env));
  await waitFor(someoneWaits, { timeoutMs: 5_000, what: 'the deletion to wait for the counting' });
  g.open();
  expect(await counting).toBe(1);
  expect(await deleting).toEqual({ removed: 2 });
  expect(await rowsOf(env)).toBe(0);
  expect(await rowsOf(kept)).toBe(2);
});

it('counts nothing of an environment whose deletion is open when the counting starts: the counting waits, then skips it', async () => {
  const env = newId('environment');
  await rollups().record([sent(env)]);
  const g = gate();
  const deleting = rollups(g.opened).environmentDeleted(deletion(env));
  await waitFor(someoneHolds, { timeoutMs: 5_000, what: 'the deletion to hold its transaction' });
  const late = sent(env);
  const counting = rollups().record([late]);
  await waitFor(someoneWaits, { timeoutMs: 5_000, what: 'the counting to wait for the deletion' });
  g.open();
  expect(await deleting).toEqual({ removed: 2 });
  // Recorded as processed (a redelivery adds nothing either), but not added.
  expect(await counting).toBe(1);
  expect(await rowsOf(env)).toBe(0);
  expect(await rollups().record([late])).toBe(0);
});
