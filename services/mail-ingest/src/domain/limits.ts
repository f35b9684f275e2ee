/** Per client address: connections at once, and messages per minute (a sliding window of 60 one-second slots). */
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

export class MessageRateLimiter {
  private readonly windows = new Map<string, { slots: number[]; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one message; false when the address already sent perMinute in the last minute. */
  take(ip: string): boolean {
    if (this.perMinute <= 0) return true;
    const second = Math.floor(this.now() / 1000);
    const w = this.windows.get(ip) ?? { slots: new Array<number>(60).fill(0), at: second };
    // Clear the slots of the seconds that passed since the last message.
    for (let s = Math.max(w.at + 1, second - 59); s <= second; s++) w.slots[s % 60] = 0;
    w.at = second;
    const total = w.slots.reduce((a, b) => a + b, 0);
    this.windows.set(ip, w);
    if (total >= this.perMinute) return false;
    w.slots[second % 60]! += 1;
    if (this.windows.size > 50_000) this.sweep(second);
    return true;
  }

  private sweep(second: number): void {
    for (const [ip, w] of this.windows) if (second - w.at >= 60) this.windows.delete(ip);
  }
}
