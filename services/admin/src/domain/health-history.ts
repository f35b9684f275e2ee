/**
 * The health history: a sample every interval (one instance takes each: the round's slot is
 * claimed first), each recording the status before it so a change is marked as such; samples
 * older than the retention purged by the round that took the sample; ranges read oldest first.
 */
import { AppError, encodePageToken, healthReason, healthStatus, idSchema, newId, pageCursor, type HealthReport, type HealthStatus, type RpcParsedRequest, type RpcResponse } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { HealthSampleRepository, HealthSampleSummary } from '../repo/health-sample.repository';

const DAY_MS = 86_400_000;
/** The widest range one query reads. */
export const MAX_RANGE_DAYS = 31;
/** Without `from`: the last day. */
export const DEFAULT_RANGE_MS = DAY_MS;

const cursor = z.object({ after: idSchema('healthSample') });
const reasons = z.array(healthReason);

export interface HistoryOptions {
  intervalMs: number;
  retentionDays: number;
}

/** The start of the interval `now` is in: the round's slot. */
export function slotOf(now: Date, intervalMs: number): Date {
  return new Date(Math.floor(now.getTime() / intervalMs) * intervalMs);
}

/** Whether a sample with `status` after one with `previous` is a change (the first sample is one). */
export function isChange(previous: HealthStatus | undefined, status: HealthStatus): boolean {
  return previous !== status;
}

export type SampleStore = Pick<HealthSampleRepository, keyof HealthSampleRepository>;

export class HealthHistory {
  constructor(
    private readonly repo: SampleStore,
    private readonly check: () => Promise<HealthReport>,
    private readonly clock: Clock,
    private readonly opts: HistoryOptions,
  ) {}

  /**
   * One round: the sample of this interval, unless another instance took it; then what
   * `after` does with it (alerts) and the purge. The report, or undefined when skipped.
   */
  async round(after?: (report: HealthReport) => Promise<void>): Promise<HealthReport | undefined> {
    const now = this.clock.now();
    if (!(await this.repo.claimRound(slotOf(now, this.opts.intervalMs)))) return undefined;
    const report = await this.check();
    const latest = await this.repo.latestStatus();
    const previous = latest === undefined ? undefined : healthStatus.parse(latest);
    const takenAt = new Date(report.checked_at);
    await this.repo.insert({
      id: newId('healthSample', takenAt.getTime()),
      taken_at: takenAt,
      status: report.status,
      previous_status: previous ?? null,
      status_changed: isChange(previous, report.status),
      reasons: JSON.stringify(report.reasons),
      report: JSON.stringify(report),
    });
    if (after) await after(report);
    const cutoff = new Date(now.getTime() - this.opts.retentionDays * DAY_MS);
    await this.repo.purgeSamples(cutoff);
    await this.repo.purgeRounds(cutoff);
    return report;
  }

  async query(q: RpcParsedRequest<'admin.health.history'>): Promise<RpcResponse<'admin.health.history'>> {
    const now = this.clock.now();
    const to = q.to ? new Date(q.to) : now;
    const from = q.from ? new Date(q.from) : new Date(to.getTime() - DEFAULT_RANGE_MS);
    if (from >= to) throw new AppError('invalid_request', 'from must be before to', { details: [{ path: 'from', message: 'must be before to' }] });
    if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
      throw new AppError('invalid_request', `a range spans at most ${MAX_RANGE_DAYS} days`, { details: [{ path: 'from', message: `at most ${MAX_RANGE_DAYS} days before to` }] });
    }
    const after = pageCursor(q.page_token, cursor)?.after;
    const rows = await this.repo.list({ from, to, after, changesOnly: q.changes_only === 'true', limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    return {
      data: page.map(toSample),
      next_page_token: rows.length > q.limit ? encodePageToken({ after: page[page.length - 1]!.id }) : null,
    };
  }
}

function toSample(row: HealthSampleSummary) {
  return {
    id: row.id,
    taken_at: row.taken_at.toISOString(),
    status: healthStatus.parse(row.status),
    previous_status: row.previous_status === null ? null : healthStatus.parse(row.previous_status),
    status_changed: row.status_changed,
    reasons: reasons.parse(row.reasons),
  };
}
