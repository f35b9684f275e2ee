/**
 * This instance's lease: one `workers` row, renewed every third of a lease, under which
 * every delivery it claims or creates is held. If the instance dies, the row runs out and
 * another instance's reaper hands its deliveries back (DeliveryRepository.reapExpired).
 *
 * While renewals fail it protects against a takeover it cannot see: from two thirds of a
 * lease after the last renewal was sent it starts nothing (`valid()` is false), and from
 * five sixths on it asks for the attempts in flight to be cut short (`lapsed`), both before
 * another instance can find the lease run out. If a renewal finds the row gone (the lease
 * did run out), the deliveries are another instance's now: it registers again under a new
 * name (`<owner>.<n>`, `lost`), so nothing late under the old name counts.
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { DeliveryRepository } from '../repo/delivery.repository';

/** What the dispatcher does when the lease changes. */
export interface LeaseHolder {
  /** Renewals have failed for five sixths of a lease (called every twelfth of a lease while so). */
  lapsed(): void;
  /** The lease ran out and its deliveries were taken over: what is held under `oldOwner` is not this instance's any more. */
  lost(oldOwner: string, owner: string): void;
  /** Renewed after valid() had turned false: work may start again. */
  resumed(): void;
  /** After each renewal that went through: the upkeep done under the lease (hand-backs, takeovers). */
  renewed(now: Date): Promise<void>;
}

export class InstanceLease {
  private name: string;
  private gen = 0;
  /** Until when (monotonic ms) work may start: two thirds of a lease after the last renewal was sent. Infinity until start(). */
  private validUntil = Infinity;
  /** From when (monotonic ms) attempts in flight are cut: five sixths of a lease after the last renewal was sent. */
  private cutAt = Infinity;
  private timers: NodeJS.Timeout[] = [];
  private beating: Promise<void> | undefined;

  constructor(
    private readonly repo: Pick<DeliveryRepository, 'heartbeat' | 'renew'>,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly leaseMs: number,
    private readonly baseOwner: string,
    private readonly holder: LeaseHolder,
    private readonly log: Logger,
  ) {
    this.name = baseOwner;
  }

  /** The name deliveries are held under now. */
  get owner(): string {
    return this.name;
  }

  /** Changes with each name: work begun under an older generation is not this instance's any more. */
  get generation(): number {
    return this.gen;
  }

  valid(): boolean {
    return this.monotonic() < this.validUntil;
  }

  /** Registers the lease row, then keeps it renewed and watches for a lapse. */
  async start(): Promise<void> {
    const sentAt = this.monotonic();
    await this.repo.heartbeat(this.name, this.until(this.clock.now()));
    this.renewedAt(sentAt);
    this.timers.push(setInterval(() => this.monotonic() >= this.cutAt && this.holder.lapsed(), Math.max(25, Math.floor(this.leaseMs / 12))).unref());
    this.timers.push(setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3))).unref());
  }

  /** Stops renewing (after the last renewal running); the row stays until the caller retires it. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.beating;
  }

  /** One renewal now (coalesced with one running): the timer's work. */
  renew(): Promise<void> {
    return (this.beating ??= this.beat().finally(() => (this.beating = undefined)));
  }

  private until(now: Date): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  private renewedAt(sentAt: number): void {
    this.validUntil = sentAt + (this.leaseMs * 2) / 3;
    this.cutAt = sentAt + (this.leaseMs * 5) / 6;
  }

  private async beat(): Promise<void> {
    const sentAt = this.monotonic();
    try {
      const now = this.clock.now();
      if (!(await this.repo.renew(this.name, this.until(now)))) {
        const old = this.name;
        this.name = `${this.baseOwner}.${++this.gen}`;
        // Nothing starts until the new name is registered.
        this.validUntil = -Infinity;
        this.cutAt = -Infinity;
        this.holder.lost(old, this.name);
        await this.repo.heartbeat(this.name, this.until(this.clock.now()));
      }
      // Run out before or during this renewal (a slow database): attempts that finished meanwhile started nothing.
      const lapsed = !this.valid();
      this.renewedAt(sentAt);
      if (lapsed) this.holder.resumed();
      await this.holder.renewed(now);
    } catch (err) {
      this.log.warn({ err, starts_again: this.valid() }, 'lease renewal failed');
    }
  }
}
