/**
 * Failures per key (a person's wrong current passwords), counted in this instance's memory by
 * rate-limiter-flexible, as the password change's FailureLimiter: with N auth instances a
 * person may fail up to N times as often, which the limit is small enough to allow.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { FailureLimiter } from '../domain/password-change';

export function failureLimiter(limit: { count: number; windowSeconds: number }): FailureLimiter {
  const limiter = new RateLimiterMemory({ points: limit.count, duration: limit.windowSeconds });
  return {
    async wait(key) {
      const res = await limiter.get(key);
      return res && res.consumedPoints >= limit.count ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : undefined;
    },
    async failed(key) {
      // Past the limit the library refuses with its answer: the failure is counted either way.
      await limiter.consume(key).catch((err: unknown) => {
        if (!(err instanceof RateLimiterRes)) throw err;
      });
    },
  };
}
