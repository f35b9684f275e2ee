/**
 * Counting into the rollups and a deleted environment, without a database: the deletion
 * records the environment and deletes its rows in one transaction; its events are not counted
 * afterwards (in flight, redelivered, or replayed), while they are still marked processed;
 * other environments are untouched; a second fact changes nothing.
 */
import type { EventEnvelope, Fact } from '@mailroom/contracts';
import type { CountsUpsert, LatencyUpsert } from '../repo/rollup.repository';
import type { MetricsTx } from '../repo/tables';
import type { RollupStore, Transact } from './ports';
import { ALL_INBOXES } from './rollup';
import { Rollups } from './rollups';

const sent = (id: string, env_id: string, org_id = 'org_1'): EventEnvelope => ({
  id,
  type: 'message.sent',
  timestamp: '2026-11-20T10:15:00.000Z',
  org_id,
  env_id,
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id: 'inb_a', from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', provider_message_id: 'p', sent_at: '2026-11-20T10:15:00.000Z' },
});
const deletion = (env_id: string): Fact<'internal.orgs.environment.deleted'> => ({ org_id: 'org_1', env_id, deleted_at: '2026-11-20T11:00:00.000Z' });

/** The rollup tables in memory; `log` records each step with the transaction it ran in. */
function setUp() {
  const processed = new Set<string>();
  const tombstones = new Map<string, { org_id: string; deleted_at: Date }>();
  let counts: CountsUpsert[] = [];
  let latency: LatencyUpsert[] = [];
  const log: string[] = [];
  let txs = 0;
  const tx = () => `tx${txs}`;
  const transact: Transact = async (work) => {
    txs += 1;
    return work({} as MetricsTx);
  };
  const none = async () => {
    throw new Error('not expected');
  };
  const store: RollupStore = {
    markProcessed: async (ids) => new Set(ids.filter((id) => !processed.has(id) && processed.add(id))),
    deletedAmong: async (envIds) => new Set(envIds.filter((e) => tombstones.has(e))),
    deleteEnvironment: async (env) => {
      log.push(`delete ${env.env_id} in ${tx()}`);
      const before = counts.length + latency.length;
      const kept = (r: { org_id: string; env_id: string }) => !(r.org_id === env.org_id && r.env_id === env.env_id);
      counts = counts.filter(kept);
      latency = latency.filter(kept);
      return before - counts.length - latency.length;
    },
    addCounts: async (rows) => void counts.push(...rows),
    addLatency: async (rows) => void latency.push(...rows),
    truncate: none,
    pruneProcessed: none,
    countsByHour: none,
    totals: none,
    latency: none,
    topInboxes: none,
    hasInbox: none,
    organizationMessages: none,
    platformMail: none,
  };
  const rollups = new Rollups({
    transact,
    store,
    tombstones: {
      record: async (_tx, env) => {
        log.push(`record ${env.env_id} in ${tx()}`);
        if (tombstones.has(env.env_id)) return false;
        tombstones.set(env.env_id, { org_id: env.org_id, deleted_at: env.deleted_at });
        return true;
      },
    },
  });
  const rowsOf = (env: string) => counts.filter((r) => r.env_id === env).map((r) => [r.inbox_id, r.sent]);
  return { rollups, rowsOf, processed, tombstones, log };
}

describe('a deleted environment', () => {
  it('has its rows deleted after it is recorded, in one transaction, and no other environment\'s', async () => {
    const { rollups, rowsOf, tombstones, log } = setUp();
    await rollups.record([sent('evt_1', 'env_gone'), sent('evt_2', 'env_kept')]);
    expect(rowsOf('env_gone')).toEqual([
      [ALL_INBOXES, 1],
      ['inb_a', 1],
    ]);

    expect(await rollups.environmentDeleted(deletion('env_gone'))).toEqual({ removed: 2 });
    expect(log).toEqual(['record env_gone in tx2', 'delete env_gone in tx2']);
    expect(tombstones.get('env_gone')).toEqual({ org_id: 'org_1', deleted_at: new Date('2026-11-20T11:00:00.000Z') });
    expect(rowsOf('env_gone')).toEqual([]);
    expect(rowsOf('env_kept')).toEqual([
      [ALL_INBOXES, 1],
      ['inb_a', 1],
    ]);
  });

  it('counts none of its events afterwards (in flight or replayed), yet marks them processed', async () => {
    const { rollups, rowsOf, processed } = setUp();
    await rollups.environmentDeleted(deletion('env_gone'));
    expect(await rollups.record([sent('evt_late', 'env_gone'), sent('evt_other', 'env_kept')])).toBe(2);
    expect(rowsOf('env_gone')).toEqual([]);
    expect(rowsOf('env_kept')).toEqual([
      [ALL_INBOXES, 1],
      ['inb_a', 1],
    ]);
    expect([...processed].sort()).toEqual(['evt_late', 'evt_other']);
  });

  it('changes nothing when the fact comes again', async () => {
    const { rollups, rowsOf } = setUp();
    await rollups.record([sent('evt_1', 'env_gone')]);
    await rollups.environmentDeleted(deletion('env_gone'));
    expect(await rollups.environmentDeleted(deletion('env_gone'))).toEqual({ removed: 0 });
    expect(rowsOf('env_gone')).toEqual([]);
  });
});
