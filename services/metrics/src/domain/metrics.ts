/**
 * The answers of the metrics routes, read from the rollups of the caller's organization and
 * environment. An `inbox_id` or `domain_id` with no activity recorded in the environment
 * answers 404: the rollups are the only inboxes and domains metrics knows (docs/decisions.md,
 * "Metrics"). Both together: the inbox must be on the domain (400 otherwise), and the answer
 * is the inbox's.
 */
import { AppError, type MetricsActivity, type MetricsCounts, type MetricsDeliverability, type MetricsQuery, type MetricsUsage, type MetricsSummary, type Tenant } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { CountsRow, Window } from '../repo/rollup.repository';
import { breachesOf, ratesOf, scoreOf, warningMessage, type Thresholds } from './deliverability';
import { LATENCY_BUCKETS, quantile } from './histogram';
import { checkInboxOnDomain } from './inbox-domains';
import type { RollupStore } from './ports';
import { HOUR_MS, hoursOf, previousRange, resolveRange, type Range } from './range';
import { ALL_INBOXES } from './rollup';

export interface MetricsSettings {
  thresholds: Thresholds;
  /** Inboxes a warning names at most. */
  topInboxes: number;
}

export function countsOf(row: CountsRow): MetricsCounts {
  const rejected_by_reason = { blocked_recipient: row.rejected_blocked_recipient, rate_limited: row.rejected_rate_limited, account_paused: row.rejected_account_paused };
  return {
    received: row.received,
    sent: row.sent,
    delivered: row.delivered,
    bounced_hard: row.bounced_hard,
    bounced_soft: row.bounced_soft,
    complained: row.complained,
    rejected: rejected_by_reason.blocked_recipient + rejected_by_reason.rate_limited + rejected_by_reason.account_paused,
    rejected_by_reason,
  };
}

const ZERO: CountsRow = {
  received: 0,
  sent: 0,
  delivered: 0,
  bounced_hard: 0,
  bounced_soft: 0,
  complained: 0,
  rejected_blocked_recipient: 0,
  rejected_rate_limited: 0,
  rejected_account_paused: 0,
};

export class Metrics {
  constructor(private readonly deps: { store: RollupStore; clock: Clock; settings: MetricsSettings }) {}

  async activity(t: Tenant, q: MetricsQuery): Promise<MetricsActivity> {
    const range = resolveRange(q, this.deps.clock.now(), { kind: 'last_hours', hours: 24 });
    const w = await this.window(t, q, range);
    const rows = new Map((await this.deps.store.countsByHour(t, w)).map((r) => [r.hour.getTime(), r]));
    return {
      ...this.head(range, q),
      buckets: hoursOf(range).map((hour) => ({
        start: hour.toISOString(),
        end: new Date(hour.getTime() + HOUR_MS).toISOString(),
        ...countsOf(rows.get(hour.getTime()) ?? ZERO),
      })),
    };
  }

  async summary(t: Tenant, q: MetricsQuery): Promise<MetricsSummary> {
    const range = resolveRange(q, this.deps.clock.now(), { kind: 'this_month' });
    const w = await this.window(t, q, range);
    const before = previousRange(range);
    const [totals, previous] = await Promise.all([this.deps.store.totals(t, w), this.deps.store.totals(t, { ...w, ...before })]);
    return {
      ...this.head(range, q),
      totals: countsOf(totals),
      previous: { from: before.from.toISOString(), to: before.to.toISOString(), totals: countsOf(previous) },
    };
  }

  async deliverability(t: Tenant, q: MetricsQuery): Promise<MetricsDeliverability> {
    const range = resolveRange(q, this.deps.clock.now(), { kind: 'last_hours', hours: 30 * 24 });
    const w = await this.window(t, q, range);
    const [totals, buckets] = await Promise.all([this.deps.store.totals(t, w), this.deps.store.latency(t, w)]);
    const counts = countsOf(totals);
    const rates = ratesOf(counts);
    const histogram = new Array<number>(LATENCY_BUCKETS).fill(0);
    for (const b of buckets) histogram[b.bucket] = b.deliveries;
    const warnings = await Promise.all(
      breachesOf(rates, this.deps.settings.thresholds).map(async (b) => {
        const top = await this.deps.store.topInboxes(t, w, b.code === 'complaint_rate' ? 'complained' : 'bounced_hard', this.deps.settings.topInboxes);
        return { ...b, message: warningMessage(b, top), top_inboxes: top };
      }),
    );
    return {
      ...this.head(range, q),
      counts,
      rates,
      latency_ms: { count: histogram.reduce((a, b) => a + b, 0), p50: quantile(histogram, 0.5), p95: quantile(histogram, 0.95) },
      score: scoreOf(rates),
      warnings,
    };
  }

  /**
   * An organization's messages in a period, for its usage. The rollups are hourly: a bound
   * inside an hour is refused (a calendar month's are whole hours), never rounded.
   */
  async usage(orgId: string, period: { start: string; end: string }): Promise<MetricsUsage> {
    const start = new Date(period.start);
    const end = new Date(period.end);
    const details = [start, end].flatMap((d, i) => (d.getTime() % HOUR_MS === 0 ? [] : [{ path: i ? 'end' : 'start', message: 'must be a whole hour (UTC): the rollups are hourly' }]));
    if (details.length) throw new AppError('invalid_request', 'usage periods are counted in whole hours', { details });
    const m = await this.deps.store.organizationMessages(orgId, start, end);
    return { messages_sent: m.sent, messages_received: m.received };
  }

  /** The platform's mail (every organization) from the hour `since` falls in, for admin's alerts. */
  async platformMail(since: string) {
    const t = new Date(since).getTime();
    return this.deps.store.platformMail(new Date(t - (t % HOUR_MS)));
  }

  private head(range: Range, q: MetricsQuery) {
    return { from: range.from.toISOString(), to: range.to.toISOString(), inbox_id: q.inbox_id ?? null, domain_id: q.domain_id ?? null };
  }

  /** The window read; 404 for an inbox or a domain without activity in the environment, 400 for an inbox not on the domain. */
  private async window(t: Tenant, q: MetricsQuery, range: Range): Promise<Window> {
    const [inboxKnown, domainKnown] = await Promise.all([
      q.inbox_id === undefined || this.deps.store.hasInbox(t, q.inbox_id),
      q.domain_id === undefined || this.deps.store.hasDomain(t, q.domain_id),
    ]);
    if (!inboxKnown) throw new AppError('not_found', `inbox ${q.inbox_id} not found: this environment has no activity recorded for it`);
    if (!domainKnown) throw new AppError('not_found', `domain ${q.domain_id} not found: this environment has no activity recorded on it`);
    if (q.inbox_id !== undefined && q.domain_id !== undefined) {
      checkInboxOnDomain({ inbox_id: q.inbox_id, domain_id: q.domain_id }, (await this.deps.store.domainOfInbox(t, q.inbox_id)) ?? null);
    }
    return { ...range, key: q.inbox_id ?? q.domain_id ?? ALL_INBOXES, domainId: q.domain_id };
  }
}
