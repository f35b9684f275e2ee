import { AppError } from '@mailroom/contracts';
import type { CountsRow } from '../repo/rollup.repository';
import { Metrics } from './metrics';
import type { RollupStore } from './ports';

const tenant = { org_id: 'org_1', env_id: 'env_1' };
const zero: CountsRow = { received: 0, sent: 0, delivered: 0, bounced_hard: 0, bounced_soft: 0, complained: 0, rejected_blocked_recipient: 0, rejected_rate_limited: 0, rejected_account_paused: 0 };
const clock = { now: () => new Date('2026-11-20T10:25:00.000Z') };

function store(over: Partial<RollupStore> = {}): RollupStore {
  const none = async () => {
    throw new Error('not expected');
  };
  return {
    markProcessed: none,
    deletedAmong: none,
    deleteEnvironment: none,
    addCounts: none,
    addLatency: none,
    truncate: none,
    pruneProcessed: none,
    countsByHour: async () => [],
    totals: async () => zero,
    latency: async () => [],
    topInboxes: async () => [],
    hasInbox: async () => true,
    organizationMessages: async () => ({ sent: 0, received: 0 }),
    platformMail: async () => ({ sent: 0, bounced_hard: 0, bounced_soft: 0, complained: 0 }),
    ...over,
  };
}
const metrics = (s: RollupStore) => new Metrics({ store: s, clock, settings: { thresholds: { complaintRate: 0.001, hardBounceRate: 0.02 }, topInboxes: 5 } });

describe('metrics answers', () => {
  it('has every hour of the range, with zeros where the rollups have no row', async () => {
    const answer = await metrics(store({ countsByHour: async () => [{ ...zero, hour: new Date('2026-11-20T09:00:00.000Z'), sent: 3, rejected_rate_limited: 2 }] })).activity(tenant, {});
    expect(answer.buckets).toHaveLength(24);
    expect(answer.buckets[0]).toMatchObject({ start: '2026-11-19T11:00:00.000Z', end: '2026-11-19T12:00:00.000Z', sent: 0 });
    expect(answer.buckets[22]).toMatchObject({ start: '2026-11-20T09:00:00.000Z', sent: 3, rejected: 2, rejected_by_reason: { rate_limited: 2, blocked_recipient: 0, account_paused: 0 } });
    expect(answer.inbox_id).toBeNull();
  });

  it('answers 404 for an inbox with no activity in the environment', async () => {
    await expect(metrics(store({ hasInbox: async () => false })).summary(tenant, { inbox_id: 'inb_x' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('reads the previous period of the same length for the summary', async () => {
    const windows: string[] = [];
    await metrics(
      store({
        totals: async (_t, w) => {
          windows.push(`${w.from.toISOString()} ${w.to.toISOString()}`);
          return zero;
        },
      }),
    ).summary(tenant, { from: '2026-11-20T00:00:00Z', to: '2026-11-20T06:00:00Z' });
    expect(windows.sort()).toEqual(['2026-11-19T18:00:00.000Z 2026-11-20T00:00:00.000Z', '2026-11-20T00:00:00.000Z 2026-11-20T06:00:00.000Z']);
  });

  it('warns with the top inboxes and takes p50/p95 from the histogram', async () => {
    const answer = await metrics(
      store({
        totals: async () => ({ ...zero, sent: 1000, delivered: 990, complained: 2 }),
        latency: async () => [{ bucket: 0, deliveries: 990 }],
        topInboxes: async (_t, _w, column) => (column === 'complained' ? [{ inbox_id: 'inb_a', count: 2, sent: 400 }] : []),
      }),
    ).deliverability(tenant, {});
    expect(answer.warnings).toEqual([expect.objectContaining({ code: 'complaint_rate', rate: 0.002, top_inboxes: [{ inbox_id: 'inb_a', count: 2, sent: 400 }] })]);
    expect(answer.latency_ms).toEqual({ count: 990, p50: 50, p95: 95 });
    expect(answer.score).toBe(80);
  });

  it('counts usage over whole hours only', async () => {
    const m = metrics(store({ organizationMessages: async () => ({ sent: 4, received: 9 }) }));
    await expect(m.usage('org_1', { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' })).resolves.toEqual({ messages_sent: 4, messages_received: 9 });
    const refused = await m.usage('org_1', { start: '2026-11-01T00:30:00.000Z', end: '2026-12-01T00:00:00.000Z' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).details).toEqual([{ path: 'start', message: expect.stringContaining('whole hour') }]);
  });
});

describe('the platform\'s mail, for admin\'s alerts', () => {
  it('counts from the start of the hour the time falls in', async () => {
    const asked: Date[] = [];
    const m = metrics(store({ platformMail: async (from) => (asked.push(from), { sent: 10, bounced_hard: 1, bounced_soft: 0, complained: 2 }) }));
    expect(await m.platformMail('2026-11-19T10:25:00.000Z')).toEqual({ sent: 10, bounced_hard: 1, bounced_soft: 0, complained: 2 });
    expect(asked).toEqual([new Date('2026-11-19T10:00:00.000Z')]);
  });
});
