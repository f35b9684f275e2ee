/**
 * Token buckets per key (credential or client IP), in this gateway instance's memory:
 * with N instances behind a balancer the effective limit is up to N times higher, which
 * the limits are sized for. Buckets that refilled completely are forgotten.
 */
export interface Take {
  ok: boolean;
  /** Seconds until one token is available (when not ok). */
  retryAfterSeconds: number;
  remaining: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /** `perSecond` 0 disables the limiter. */
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  take(key: string, cost = 1): Take {
    if (!this.enabled) return { ok: true, retryAfterSeconds: 0, remaining: Infinity };
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      this.buckets.set(key, bucket);
      if (this.buckets.size > 100_000) this.sweep();
      return { ok: true, retryAfterSeconds: 0, remaining: Math.floor(bucket.tokens) };
    }
    this.buckets.set(key, bucket);
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - bucket.tokens) / this.perSecond)), remaining: 0 };
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
