/**
 * An organization's usage without a database or a bus: the period (the calendar month in
 * UTC holding the clock's now), the counts of orgs and of the owning services set against the
 * plan's limits, and the refusal when an owner does not answer (never partial counts).
 */
import { AppError, DEFAULT_PLAN_LIMITS, type PlanLimits, type PlanName } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { refusalOf } from '@mailroom/testing';
import type { HeldInOrgs } from '../repo/usage.repository';
import type { Period, UsageOwners } from './ports';
import { countsOfOwners, ownersUnavailable, periodOf, Usage } from './usage';

const iso = (d: Date) => d.toISOString();

describe('the period of usage', () => {
  it('is the calendar month in UTC that holds now, its end the first instant of the next month', () => {
    const p = periodOf(new Date('2026-11-15T13:45:12.345Z'));
    expect([iso(p.start), iso(p.end)]).toEqual(['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
  });

  it('starts at the first instant of the month and still holds its last millisecond', () => {
    expect(iso(periodOf(new Date('2026-11-01T00:00:00.000Z')).start)).toBe('2026-11-01T00:00:00.000Z');
    expect(iso(periodOf(new Date('2026-11-30T23:59:59.999Z')).end)).toBe('2026-12-01T00:00:00.000Z');
    expect(iso(periodOf(new Date('2026-12-01T00:00:00.000Z')).start)).toBe('2026-12-01T00:00:00.000Z');
  });

  it('crosses the year in December and follows February in leap years', () => {
    const dec = periodOf(new Date('2026-12-31T23:00:00Z'));
    expect([iso(dec.start), iso(dec.end)]).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso(periodOf(new Date('2028-02-29T12:00:00Z')).end)).toBe('2028-03-01T00:00:00.000Z');
  });

  it('is UTC whatever the offset the instant was written with', () => {
    // 23:30 on 31 October in New York is already November in UTC.
    expect(iso(periodOf(new Date('2026-10-31T23:30:00-04:00')).start)).toBe('2026-11-01T00:00:00.000Z');
  });
});

const unavailable = (service: string) => new AppError('service_unavailable', `the ${service} service is unavailable; retry shortly`);

/** Owners answering fixed counts, each replaceable by a failure; records what they were asked. */
function owners(fail: Partial<Record<keyof UsageOwners, Error>> = {}) {
  const asked: { owner: string; orgId: string; period?: Period }[] = [];
  const answer = async <T>(owner: keyof UsageOwners, value: T, orgId: string, period?: Period): Promise<T> => {
    asked.push({ owner, orgId, ...(period ? { period } : {}) });
    const err = fail[owner];
    if (err) throw err;
    return value;
  };
  const port: UsageOwners = {
    mailbox: (orgId) => answer('mailbox', { inboxes: 4 }, orgId),
    metrics: (orgId, period) => answer('metrics', { messages_sent: 37, messages_received: 120 }, orgId, period),
    webhooks: (orgId) => answer('webhooks', { webhook_endpoints: 2 }, orgId),
    domains: (orgId) => answer('domains', { domains: 1 }, orgId),
  };
  return { port, asked };
}

function usage(o: { held?: HeldInOrgs | undefined; owners?: UsageOwners; plans?: Record<PlanName, PlanLimits>; now?: string } = {}) {
  const clock = new ManualClock(new Date(o.now ?? '2026-11-15T13:45:12.345Z'));
  const held: HeldInOrgs | undefined = 'held' in o ? o.held : { plan: 'free', members: 2, pending_invitations: 1, environments: 2 };
  const seen: { orgId: string; now: Date }[] = [];
  const repo = {
    held: async (orgId: string, now: Date) => {
      seen.push({ orgId, now });
      return held;
    },
  };
  return { usage: new Usage(repo, o.owners ?? owners().port, o.plans ?? DEFAULT_PLAN_LIMITS, clock), seen, clock };
}

describe('usage', () => {
  it('sets what orgs and the owners count against the plan, for the current period', async () => {
    const { usage: u, seen } = usage();
    expect(await u.of('org_1')).toEqual({
      org_id: 'org_1',
      plan: 'free',
      period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
      usage: {
        inboxes: { used: 4, limit: 10 },
        domains: { used: 1, limit: 1 },
        members: { used: 3, limit: 3, pending_invitations: 1 },
        environments: { used: 2, limit: 2 },
        webhook_endpoints: { used: 2, limit: 5 },
        messages_sent: { used: 37, limit: null },
        messages_received: { used: 120, limit: null },
      },
      generated_at: '2026-11-15T13:45:12.345Z',
    });
    // Invitations are pending or expired as of the clock's now.
    expect(seen).toEqual([{ orgId: 'org_1', now: new Date('2026-11-15T13:45:12.345Z') }]);
  });

  it('asks every owner about the organization and the period of the clock', async () => {
    const o = owners();
    const { usage: u, clock } = usage({ owners: o.port });
    clock.set(new Date('2027-01-01T00:00:00.000Z'));
    const got = await u.of('org_1');
    expect(got.period).toEqual({ start: '2027-01-01T00:00:00.000Z', end: '2027-02-01T00:00:00.000Z' });
    const period = { start: new Date('2027-01-01T00:00:00.000Z'), end: new Date('2027-02-01T00:00:00.000Z') };
    expect(o.asked).toEqual([
      { owner: 'mailbox', orgId: 'org_1' },
      { owner: 'metrics', orgId: 'org_1', period },
      { owner: 'webhooks', orgId: 'org_1' },
      { owner: 'domains', orgId: 'org_1' },
    ]);
  });

  it('takes the limits of the organization\'s plan from the configured table; null is no limit', async () => {
    const plans = { ...DEFAULT_PLAN_LIMITS, pro: { ...DEFAULT_PLAN_LIMITS.pro, inboxes: 25 } };
    const pro = await usage({ plans, held: { plan: 'pro', members: 1, pending_invitations: 0, environments: 1 } }).usage.of('org_1');
    expect([pro.plan, pro.usage.inboxes, pro.usage.members]).toEqual(['pro', { used: 4, limit: 25 }, { used: 1, limit: 50, pending_invitations: 0 }]);
    const enterprise = await usage({ held: { plan: 'enterprise', members: 1, pending_invitations: 0, environments: 1 } }).usage.of('org_1');
    expect(Object.values(enterprise.usage).map((c) => c.limit)).toEqual([null, null, null, null, null, null, null]);
  });

  it('is not_found for an organization that does not exist', async () => {
    expect((await refusalOf(usage({ held: undefined }).usage.of('org_gone'))).code).toBe('not_found');
  });

  it('refuses a plan the table does not hold as an internal error (a row no code writes), not as counts without limits', async () => {
    const refusal = await refusalOf(usage({ held: { plan: 'gold', members: 1, pending_invitations: 0, environments: 1 } }).usage.of('org_1'));
    expect([refusal.code, refusal.message]).toEqual(['internal_error', expect.stringMatching(/"gold"/)]);
  });
});

describe('an owner that does not answer', () => {
  const period = periodOf(new Date('2026-11-15T00:00:00Z'));

  it('makes the whole answer a 503 naming it and what it counts, never partial counts', async () => {
    const refusal = await refusalOf(usage({ owners: owners({ webhooks: unavailable('webhooks') }).port }).usage.of('org_1'));
    expect([refusal.status, refusal.code, refusal.retryable]).toEqual([503, 'service_unavailable', true]);
    expect(refusal.message).toBe('usage cannot be counted now: the webhooks service (webhook_endpoints) did not answer; retry shortly');
    expect(refusal.details).toEqual([{ path: 'usage.webhook_endpoints', message: 'counted by the webhooks service, which did not answer' }]);
  });

  it('names every owner that did not answer, a slow one (timeout) as one that is down', async () => {
    const o = owners({ mailbox: new AppError('gateway_timeout', 'the mailbox service did not answer in time'), metrics: unavailable('metrics') });
    const refusal = await refusalOf(countsOfOwners(o.port, 'org_1', period));
    expect([refusal.status, refusal.message]).toEqual([503, 'usage cannot be counted now: the mailbox service (inboxes) and the metrics service (messages_sent, messages_received) did not answer; retry shortly']);
    expect(refusal.details?.map((d) => d.path)).toEqual(['usage.inboxes', 'usage.messages_sent', 'usage.messages_received']);
    expect(ownersUnavailable(['mailbox', 'metrics', 'webhooks']).message).toMatch(/the mailbox service \(inboxes\), the metrics service \(messages_sent, messages_received\) and the webhooks service/);
  });

  it('passes on an owner that answered with an error: a fault is not an outage', async () => {
    const fault = new AppError('internal_error', 'internal error');
    const refusal = await refusalOf(countsOfOwners(owners({ metrics: fault, webhooks: unavailable('webhooks') }).port, 'org_1', period));
    expect(refusal).toBe(fault);
  });
});
