/**
 * This instance's lease on the deliveries it holds: one row in `workers`, renewed every
 * third of a lease. Another instance takes the deliveries of a lease that ran out (the
 * reaper), so this one starts nothing from two thirds of a lease after its last renewal,
 * and cuts its attempts in flight short at five sixths (checked every twelfth), before
 * the others could send them too. A renewal that finds the row gone (another instance took
 * the deliveries over) gives the instance a new name: what it did under the old one
 * records nothing.
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { DeliveryRepository } from '../repo/delivery.repository';

/** What the holder of the lease does at its turns. */
export interface LeaseHolder {
  /** Renewals have failed for five sixths of a lease: attempts in flight are cut short. */
  lapsing(): void;
  /** The lease ran out and the deliveries are another instance's: `owner` is already the new name (not yet registered). */
  lost(oldOwner: string): void;
  /** Renewed after a lapse: deliver again. */
  resumed(): void;
  /** After each renewal (not when it failed): the holder's periodic work under the lease. */
  renewed(now: Date): Promise<void>;
}

export class Lease {
  /** The lease owner name: `base`, then `base.1`, `base.2`, ... after each loss. */
  owner: string;
  /** How many times the lease was lost: work begun under an older generation records nothing. */
  generation = 0;
  private validUntil = Infinity;
  private cutAt = Infinity;
  private timers: NodeJS.Timeout[] = [];
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly repo: Pick<DeliveryRepository, 'heartbeat' | 'renew'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: { base: string; leaseMs: number; monotonic: () => number },
  ) {
    this.owner = opts.base;
  }

  /** Registers the lease (deliveries are leased to this name from then on) and keeps it. */
  async start(holder: LeaseHolder): Promise<void> {
    const sentAt = this.opts.monotonic();
    await this.repo.heartbeat(this.owner, this.until(this.clock.now()));
    this.renewedAt(sentAt);
    const { leaseMs } = this.opts;
    this.timers.push(setInterval(() => this.opts.monotonic() >= this.cutAt && holder.lapsing(), Math.max(25, Math.floor(leaseMs / 12))).unref());
    this.timers.push(setInterval(() => void this.renew(holder), Math.max(100, Math.floor(leaseMs / 3))).unref());
  }

  /** Whether attempts may start and deliveries be taken under it now. */
  valid(): boolean {
    return this.opts.monotonic() < this.validUntil;
  }

  /** When a lease renewed at `now` runs out. */
  until(now: Date): Date {
    return new Date(now.getTime() + this.opts.leaseMs);
  }

  /** Renews now (one renewal at a time). */
  renew(holder: LeaseHolder): Promise<void> {
    this.renewing ??= this.renewOnce(holder).finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /** Stops renewing, once a renewal under way has ended. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.renewing;
  }

  private renewedAt(sentAt: number): void {
    this.validUntil = sentAt + (this.opts.leaseMs * 2) / 3;
    this.cutAt = sentAt + (this.opts.leaseMs * 5) / 6;
  }

  private async renewOnce(holder: LeaseHolder): Promise<void> {
    const sentAt = this.opts.monotonic();
    try {
      const now = this.clock.now();
      if (!(await this.repo.renew(this.owner, this.until(now)))) {
        const old = this.owner;
        this.owner = `${this.opts.base}.${++this.generation}`;
        // Nothing starts until the new name is registered.
        this.validUntil = -Infinity;
        this.cutAt = -Infinity;
        holder.lost(old);
        await this.repo.heartbeat(this.owner, this.until(this.clock.now()));
      }
      // Run out before or during this renewal (a slow database): attempts that finished meanwhile started nothing.
      const lapsed = !this.valid();
      this.renewedAt(sentAt);
      if (lapsed) {
        this.log.info('lease renewed again: delivering');
        holder.resumed();
      }
      await holder.renewed(now);
    } catch (err) {
      this.log.warn({ err, starts_again: this.valid() }, 'lease renewal failed');
    }
  }
}
