/**
 * The range a metrics request reads: hour boundaries, UTC, `from` included and `to`
 * excluded. Given times are rounded down to their hour (`to` up, so the hour it falls in is
 * read whole); absent ones take the route's default (activity: the last 24 hours,
 * deliverability: the last 30 days, both ending with the current hour; summary: this month
 * so far). A range is refused (400, every problem named) when it is reversed or empty,
 * longer than 31 days, or starts in the future.
 */
import { AppError, METRICS_MAX_RANGE_DAYS, type ErrorDetail } from '@mailroom/contracts';

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface Range {
  from: Date;
  to: Date;
}

export type DefaultRange = { kind: 'last_hours'; hours: number } | { kind: 'this_month' };

export const floorHour = (t: number): number => Math.floor(t / HOUR_MS) * HOUR_MS;
export const ceilHour = (t: number): number => Math.ceil(t / HOUR_MS) * HOUR_MS;

/** The default range ending now: whole hours, the current one included. */
export function defaultRange(now: Date, def: DefaultRange): Range {
  const end = floorHour(now.getTime()) + HOUR_MS;
  if (def.kind === 'last_hours') return { from: new Date(end - def.hours * HOUR_MS), to: new Date(end) };
  return { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), to: new Date(end) };
}

/** The range of a request, or a 400 naming what is wrong with it. */
export function resolveRange(query: { from?: string | undefined; to?: string | undefined }, now: Date, def: DefaultRange): Range {
  const fallback = defaultRange(now, def);
  const latestEnd = floorHour(now.getTime()) + HOUR_MS;
  const to = query.to === undefined ? fallback.to.getTime() : ceilHour(Date.parse(query.to));
  let from: number;
  if (query.from !== undefined) from = floorHour(Date.parse(query.from));
  else if (query.to === undefined) from = fallback.from.getTime();
  // Only `to`: the default's length, ending there.
  else from = to - (fallback.to.getTime() - fallback.from.getTime());
  const details: ErrorDetail[] = [];
  if (from >= latestEnd) details.push({ path: 'query.from', message: `must not be in the future (it is now ${now.toISOString()})` });
  if (to <= from) details.push({ path: 'query.to', message: 'must be after from (the range is empty or reversed)' });
  else if (to - from > METRICS_MAX_RANGE_DAYS * DAY_MS) details.push({ path: 'query.to', message: `the range may be at most ${METRICS_MAX_RANGE_DAYS} days; ask for several ranges` });
  if (details.length) throw new AppError('invalid_request', details.map((d) => `${d.path.slice('query.'.length)} ${d.message}`).join('; '), { details });
  // An end past the current hour reads nothing more: it is cut there (hours are not invented).
  return { from: new Date(from), to: new Date(Math.min(to, latestEnd)) };
}

/** The period of the same length just before. */
export function previousRange(r: Range): Range {
  const length = r.to.getTime() - r.from.getTime();
  return { from: new Date(r.from.getTime() - length), to: r.from };
}

/** The start of every hour of the range. */
export function hoursOf(r: Range): Date[] {
  const hours: Date[] = [];
  for (let t = r.from.getTime(); t < r.to.getTime(); t += HOUR_MS) hours.push(new Date(t));
  return hours;
}
