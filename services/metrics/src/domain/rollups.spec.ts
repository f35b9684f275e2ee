/**
 * Counting into the rollups and a deleted environment, without a database: the deletion
 * records the environment and deletes its rows in one transaction; its events are not counted
 * afterwards (in flight, redelivered, or replayed), while they are still marked processed;
 * other environments are untouched; a second fact changes nothing.
 */
import { AppError, type EventEnvelope, type Fact } from '@mailroom/contracts';
import type { CountsUpsert, LatencyUpsert } from '../repo/rollup.repository';
import type { MetricsTx } from '../repo/tables';
import type { RollupStore, Transact } from './ports';
import { inboxKey, type InboxDomain } from './inbox-domains';
import { ALL_INBOXES } from './rollup';
import { Rollups } from './rollups';

const sent = (id: string, env_id: string, org_id = 'org_1', inbox_id = 'inb_a'): EventEnvelope => ({
  id,
  type: 'message.sent',
  timestamp: '2026-11-20T10:15:00.000Z',
  org_id,
  env_id,
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id, from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', provider_message_id: 'p', sent_at: '2026-11-20T10:15:00.000Z' },
});
const deletion = (env_id: string): Fact<'internal.orgs.environment.deleted'> => ({ org_id: 'org_1', env_id, deleted_at: '2026-11-20T11:00:00.000Z' });

/** The rollup tables in memory; `log` records each step with the transaction it ran in. `owners`: what mailbox and domains answer. */
function setUp(owners: Record<string, string | null> = {}) {
  const processed = new Set<string>();
  const learned = new Map<string, InboxDomain>();
  const asked: string[] = [];
  let ownersDown = false;
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
    inboxDomains: async (refs) => refs.flatMap((r) => learned.get(inboxKey(r)) ?? []),
    rememberInboxDomains: async (rows) => {
      for (const r of rows) if (!learned.has(inboxKey(r))) learned.set(inboxKey(r), r);
    },
    hasDomain: none,
    domainOfInbox: none,
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
    domains: {
      domainOf: async (ref) => {
        asked.push(`${ref.env_id}/${ref.inbox_id}`);
        if (ownersDown) throw new AppError('service_unavailable', 'no responders');
        return owners[ref.inbox_id] ?? null;
      },
    },
  });
  const rowsOf = (env: string) => counts.filter((r) => r.env_id === env).map((r) => [r.inbox_id, r.sent]);
  const down = (v: boolean) => void (ownersDown = v);
  return { rollups, rowsOf, processed, tombstones, log, asked, learned, down };
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

describe("an inbox's domain", () => {
  it('is asked of the owners once per inbox, and its events count in the domain row', async () => {
    const { rollups, rowsOf, asked } = setUp({ inb_a: 'dom_1', inb_b: null });
    await rollups.record([sent('evt_1', 'env_1', 'org_1', 'inb_a'), sent('evt_2', 'env_1', 'org_1', 'inb_b'), sent('evt_3', 'env_1', 'org_1', 'inb_a')]);
    await rollups.record([sent('evt_4', 'env_1', 'org_1', 'inb_a')]);
    expect(asked).toEqual(['env_1/inb_a', 'env_1/inb_b']);
    expect(rowsOf('env_1')).toEqual([
      [ALL_INBOXES, 3],
      ['dom_1', 2],
      ['inb_a', 2],
      ['inb_b', 1],
      [ALL_INBOXES, 1],
      ['dom_1', 1],
      ['inb_a', 1],
    ]);
  });

  it('is kept per tenant: the same inbox id in another environment is asked again', async () => {
    const { rollups, asked } = setUp({ inb_a: 'dom_1' });
    await rollups.record([sent('evt_1', 'env_1')]);
    await rollups.record([sent('evt_2', 'env_2')]);
    expect(asked).toEqual(['env_1/inb_a', 'env_2/inb_a']);
  });

  it('when the owners do not answer, counts nothing and fails retryably; the redelivery counts it once', async () => {
    const { rollups, rowsOf, processed, down } = setUp({ inb_a: 'dom_1' });
    down(true);
    await expect(rollups.record([sent('evt_1', 'env_1')])).rejects.toMatchObject({ code: 'service_unavailable', retryable: true });
    expect(processed.size).toBe(0);
    expect(rowsOf('env_1')).toEqual([]);
    down(false);
    expect(await rollups.record([sent('evt_1', 'env_1')])).toBe(1);
    expect(rowsOf('env_1')).toEqual([
      [ALL_INBOXES, 1],
      ['dom_1', 1],
      ['inb_a', 1],
    ]);
  });

  it('is not asked for a deleted environment', async () => {
    const { rollups, asked, learned } = setUp({ inb_a: 'dom_1' });
    await rollups.environmentDeleted(deletion('env_gone'));
    await rollups.record([sent('evt_1', 'env_gone')]);
    expect(asked).toEqual([]);
    expect(learned.size).toBe(0);
  });

  it('is what was learned first, whatever the owners say later (a replay files events as before)', async () => {
    const owners: Record<string, string | null> = { inb_a: 'dom_1' };
    const { rollups, rowsOf, asked } = setUp(owners);
    await rollups.record([sent('evt_1', 'env_1')]);
    owners.inb_a = 'dom_2';
    await rollups.record([sent('evt_2', 'env_1')]);
    expect(asked).toEqual(['env_1/inb_a']);
    expect(rowsOf('env_1').filter(([k]) => String(k).startsWith('dom_'))).toEqual([
      ['dom_1', 1],
      ['dom_1', 1],
    ]);
  });
});
