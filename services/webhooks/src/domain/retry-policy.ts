/**
 * When the next attempt of a failed delivery is due. Default schedule after a failure:
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (10 attempts in all), each delay
 * with +-20% jitter so that retries of one outage do not arrive together. A Retry-After
 * from the receiver is honoured within [scheduled delay, 2x scheduled delay]; after a
 * timeout or a 429 the next attempt is at least 60 s away.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400] as const;
export const JITTER = 0.2;
export const MIN_DELAY_AFTER_THROTTLE_SECONDS = 60;

export interface FailureHints {
  timedOut: boolean;
  httpStatus: number;
  /** Seconds the receiver asked us to wait (Retry-After), if it did. */
  retryAfterSeconds?: number | undefined;
}

export class RetryPolicy {
  constructor(
    readonly scheduleSeconds: readonly number[] = DEFAULT_RETRY_SCHEDULE_SECONDS,
    private readonly random: () => number = Math.random,
  ) {}

  /** Attempts a delivery gets in all: the first and one per scheduled delay. */
  get maxAttempts(): number {
    return this.scheduleSeconds.length + 1;
  }

  /** Delay in ms before the attempt after `attempt` (1-based) failed; undefined when none is left. */
  delayAfter(attempt: number, hints: FailureHints, maxAttempts = this.maxAttempts): number | undefined {
    if (attempt >= maxAttempts) return undefined;
    const base = this.scheduleSeconds[Math.min(attempt, this.scheduleSeconds.length) - 1];
    if (base === undefined) return undefined;
    const scheduled = base * (1 - JITTER + 2 * JITTER * this.random());
    let seconds = scheduled;
    if (hints.retryAfterSeconds !== undefined) seconds = Math.min(Math.max(hints.retryAfterSeconds, scheduled), 2 * scheduled);
    if (hints.timedOut || hints.httpStatus === 429) seconds = Math.max(seconds, MIN_DELAY_AFTER_THROTTLE_SECONDS);
    return Math.round(seconds * 1000);
  }
}

/** Retry-After: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** WEBHOOK_RETRY_SCHEDULE: comma-separated positive whole seconds. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 20 || parts.some((p) => !/^\d{1,7}$/.test(p) || Number(p) === 0)) return undefined;
  return parts.map(Number);
}
