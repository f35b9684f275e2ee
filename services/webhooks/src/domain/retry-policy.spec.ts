import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetryAfter, parseRetrySchedule, RetryPolicy } from './retry-policy';

const ok = { timedOut: false, httpStatus: 500 };

describe('RetryPolicy', () => {
  it('follows the schedule: 10 attempts, the 9 delays of the issue', () => {
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    const exact = new RetryPolicy(undefined, () => 0.5);
    expect(exact.maxAttempts).toBe(10);
    const delays = Array.from({ length: 9 }, (_, i) => exact.delayAfter(i + 1, ok));
    expect(delays).toEqual(DEFAULT_RETRY_SCHEDULE_SECONDS.map((s) => s * 1000));
    expect(exact.delayAfter(10, ok)).toBeUndefined();
  });

  it('jitters by at most 20% either way', () => {
    expect(new RetryPolicy(undefined, () => 0).delayAfter(2, ok)).toBe(240_000);
    expect(new RetryPolicy(undefined, () => 0.999999).delayAfter(2, ok)).toBe(360_000);
  });

  it('honours Retry-After within [scheduled, 2x scheduled]', () => {
    const p = new RetryPolicy(undefined, () => 0.5);
    expect(p.delayAfter(2, { ...ok, retryAfterSeconds: 1 })).toBe(300_000);
    expect(p.delayAfter(2, { ...ok, retryAfterSeconds: 450 })).toBe(450_000);
    expect(p.delayAfter(2, { ...ok, retryAfterSeconds: 99_999 })).toBe(600_000);
  });

  it('waits at least 60 s after a timeout or a 429', () => {
    const p = new RetryPolicy(undefined, () => 0.5);
    expect(p.delayAfter(1, { timedOut: true, httpStatus: 0 })).toBe(60_000);
    expect(p.delayAfter(1, { timedOut: false, httpStatus: 429 })).toBe(60_000);
    expect(p.delayAfter(1, { timedOut: false, httpStatus: 429, retryAfterSeconds: 8 })).toBe(60_000);
    expect(p.delayAfter(1, { timedOut: false, httpStatus: 503 })).toBe(5_000);
  });

  it('takes a compressed schedule and a per-delivery attempt limit', () => {
    const p = new RetryPolicy([1, 2], () => 0.5);
    expect(p.maxAttempts).toBe(3);
    expect(p.delayAfter(1, ok)).toBe(1_000);
    expect(p.delayAfter(2, ok)).toBe(2_000);
    expect(p.delayAfter(3, ok)).toBeUndefined();
    expect(p.delayAfter(1, ok, 1)).toBeUndefined();
  });

  it('parses Retry-After and the schedule variable', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:02:00 GMT', now)).toBe(120);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetrySchedule('1, 2,3')).toEqual([1, 2, 3]);
    for (const bad of ['', '1,,2', '0', '-1', '1.5', 'x']) expect(parseRetrySchedule(bad)).toBeUndefined();
  });
});
