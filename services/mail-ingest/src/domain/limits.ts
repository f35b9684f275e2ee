/** Per client address: connections at once, and messages per minute. */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Connections open at once per client address: a count, not a rate. */
export class ConnectionLimiter {
  private readonly open = new Map<string, number>();

  constructor(private readonly maxPerIp: number) {}

  /** Counts a connection; false (and not counted) when the address is at its limit. */
  acquire(ip: string): boolean {
    const n = this.open.get(ip) ?? 0;
    if (n >= this.maxPerIp) return false;
    this.open.set(ip, n + 1);
    return true;
  }

  release(ip: string): void {
    const n = (this.open.get(ip) ?? 1) - 1;
    if (n <= 0) this.open.delete(ip);
    else this.open.set(ip, n);
  }

  count(ip: string): number {
    return this.open.get(ip) ?? 0;
  }
}

/**
 * Messages per client address per minute (rate-limiter-flexible, in memory): a fixed minute
 * from the address's first message, where a sliding minute was counted before; across the
 * end of one minute an address can send up to twice the limit in a short time.
 */
export class MessageRateLimiter {
  private readonly limiter: RateLimiterMemory | undefined;

  /** `perMinute` 0 disables the limiter. */
  constructor(perMinute: number) {
    this.limiter = perMinute > 0 ? new RateLimiterMemory({ points: perMinute, duration: 60 }) : undefined;
  }

  /** Counts one message; false when the address already sent perMinute in its current minute. */
  async take(ip: string): Promise<boolean> {
    if (!this.limiter) return true;
    try {
      await this.limiter.consume(ip);
      return true;
    } catch (err) {
      // The library refuses with its answer; anything else is a fault.
      if (!(err instanceof RateLimiterRes)) throw err;
      return false;
    }
  }
}
