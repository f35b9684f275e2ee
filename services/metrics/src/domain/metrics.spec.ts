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
    hasDomain: async () => true,
    domainOfInbox: async () => 'dom_1',
    inboxDomains: none,
    rememberInboxDomains: none,
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

describe('the domain filter', () => {
  const keysRead = async (q: { inbox_id?: string; domain_id?: string }, over: Partial<RollupStore> = {}) => {
    const keys: string[] = [];
    const answer = await metrics(store({ countsByHour: async (_t, w) => (keys.push(w.key), []), ...over })).activity(tenant, q);
    return { keys, answer };
  };

  it("reads the domain's row and names the domain in the answer", async () => {
    const { keys, answer } = await keysRead({ domain_id: 'dom_1' });
    expect(keys).toEqual(['dom_1']);
    expect(answer).toMatchObject({ inbox_id: null, domain_id: 'dom_1' });
  });

  it("reads the environment's row without filters, and the inbox's with an inbox", async () => {
    expect((await keysRead({})).keys).toEqual(['*']);
    expect((await keysRead({ inbox_id: 'inb_a' })).keys).toEqual(['inb_a']);
  });

  it('answers 404 for a domain with no activity in the environment (another tenant\'s, or unknown)', async () => {
    const asked: string[] = [];
    const s = store({ hasDomain: async (t, d) => (asked.push(`${t.env_id}/${d}`), false) });
    await expect(metrics(s).deliverability(tenant, { domain_id: 'dom_x' })).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('domain dom_x') });
    expect(asked).toEqual(['env_1/dom_x']);
  });

  it("with an inbox on the domain, reads the inbox's row", async () => {
    const { keys, answer } = await keysRead({ inbox_id: 'inb_a', domain_id: 'dom_1' });
    expect(keys).toEqual(['inb_a']);
    expect(answer).toMatchObject({ inbox_id: 'inb_a', domain_id: 'dom_1' });
  });

  it('refuses an inbox on another domain, or on none, with a 400 naming it', async () => {
    for (const other of ['dom_2', null, undefined]) {
      const refused = await metrics(store({ domainOfInbox: async () => other })).summary(tenant, { inbox_id: 'inb_a', domain_id: 'dom_1' }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'invalid_request', details: [{ path: 'query.inbox_id', message: 'not on domain dom_1' }] });
    }
  });

  it('answers 404 before 400: an unknown inbox or domain is not found, whatever the other filter', async () => {
    await expect(metrics(store({ hasInbox: async () => false, domainOfInbox: async () => 'dom_2' })).summary(tenant, { inbox_id: 'inb_x', domain_id: 'dom_1' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(metrics(store({ hasDomain: async () => false, domainOfInbox: async () => 'dom_2' })).summary(tenant, { inbox_id: 'inb_a', domain_id: 'dom_x' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it("names only the domain's inboxes in a warning", async () => {
    const windows: { key: string; domainId?: string | undefined }[] = [];
    await metrics(
      store({
        totals: async () => ({ ...zero, sent: 100, complained: 1 }),
        topInboxes: async (_t, w) => (windows.push({ key: w.key, domainId: w.domainId }), []),
      }),
    ).deliverability(tenant, { domain_id: 'dom_1' });
    expect(windows).toEqual([{ key: 'dom_1', domainId: 'dom_1' }]);
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
