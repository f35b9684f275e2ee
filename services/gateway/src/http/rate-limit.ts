/**
 * Requests per key (credential or client IP), counted in this gateway instance's memory
 * (rate-limiter-flexible): with N instances behind a balancer the effective limit is up to
 * N times higher, which the limits are sized for.
 *
 * The settings are a token bucket's (a rate and a burst); the library counts fixed windows,
 * so a key may make `burst` requests per window of burst / rate seconds, the window starting
 * at its first request. The long-run rate and the burst are the same; a key that has used its
 * burst waits for the window's end (Retry-After says when) rather than for one token, and
 * across the end of a window it can make up to twice the burst at once.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export interface Take {
  ok: boolean;
  /** Seconds until a request is admitted again (when not ok). */
  retryAfterSeconds: number;
  remaining: number;
}

export class RateLimiter {
  private readonly limiter: RateLimiterMemory | undefined;

  /** `perSecond` 0 disables the limiter. */
  constructor(perSecond: number, burst: number) {
    this.limiter = perSecond > 0 ? new RateLimiterMemory({ points: burst, duration: burst / perSecond }) : undefined;
  }

  get enabled(): boolean {
    return this.limiter !== undefined;
  }

  async take(key: string, cost = 1): Promise<Take> {
    if (!this.limiter) return { ok: true, retryAfterSeconds: 0, remaining: Infinity };
    try {
      const res = await this.limiter.consume(key, cost);
      return { ok: true, retryAfterSeconds: 0, remaining: res.remainingPoints };
    } catch (err) {
      // The library refuses with its answer; anything else is a fault.
      if (!(err instanceof RateLimiterRes)) throw err;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)), remaining: 0 };
    }
  }
}
