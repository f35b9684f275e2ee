/**
 * Deliveries an instance gives back to the database as due, for any instance to claim: a
 * release that fails is tried again at each renewal (and at stop), and now and then the
 * deliveries leased to this instance that it does not hold (orphans) are given back too.
 */
import type { Logger } from '@mailroom/platform';
import type { DeliveryRepository } from '../repo/delivery.repository';

/** Every this many leases, an instance looks for deliveries leased to it that it does not hold. */
const ORPHAN_CHECK_LEASES = 2;

export interface HandBackHost {
  /** The name this instance holds deliveries under now. */
  owner(): string;
  /** Changes when the lease is lost and the instance goes on under a new name. */
  generation(): number;
  /** Whether this instance holds the delivery (queued, running or waiting for its record). */
  holds(id: number): boolean;
  /** Something was handed back: look for due work. */
  wake(): void;
}

export class HandBacks {
  /** Deliveries to hand back whose release failed. */
  private readonly unreleased = new Set<number>();
  /** When (monotonic ms) this instance last looked for orphans. */
  private orphansCheckedAt = -Infinity;

  constructor(
    private readonly repo: DeliveryRepository,
    private readonly host: HandBackHost,
    private readonly monotonic: () => number,
    private readonly leaseMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Gives deliveries this instance holds (not queued, not running) back to the database as
   * due, then looks for due work: a claim takes them if their endpoint is enabled and drops
   * them if not.
   */
  give(ids: number[]): void {
    const generation = this.host.generation();
    this.repo.release(this.host.owner(), ids).then(
      () => this.host.wake(),
      (err: unknown) => {
        // Under a name given up since: the reaper hands them back (and this instance may hold them again by now).
        if (generation !== this.host.generation()) return;
        for (const id of ids) if (!this.host.holds(id)) this.unreleased.add(id);
        this.log.warn({ err, deliveries: ids.length }, 'could not hand deliveries back; trying again at the next renewal');
      },
    );
  }

  /** Held again (a release reported failed may have gone through): not to be handed back. */
  heldAgain(id: number): void {
    if (this.unreleased.size) this.unreleased.delete(id);
  }

  /** Under each renewal: hands back what a release failed to. */
  async retry(): Promise<void> {
    if (this.unreleased.size === 0) return;
    const ids = [...this.unreleased];
    await this.repo.release(this.host.owner(), ids);
    for (const id of ids) this.unreleased.delete(id);
    this.host.wake();
  }

  /** Under each renewal, every ORPHAN_CHECK_LEASES leases: hands back the orphans. */
  async checkOrphans(now: Date): Promise<void> {
    if (this.monotonic() - this.orphansCheckedAt < ORPHAN_CHECK_LEASES * this.leaseMs) return;
    this.orphansCheckedAt = this.monotonic();
    await this.releaseOrphans(now);
  }

  /** The lease was lost: what was leased under the old name, the reaper hands back. */
  clear(): void {
    this.unreleased.clear();
  }

  /** What is still to be handed back (at stop). */
  pending(): number[] {
    return [...this.unreleased];
  }

  /**
   * Hands back deliveries leased to this instance that it does not hold. A claim or fan-out
   * whose commit went through but whose answer was lost (the connection dropped at that
   * moment) leaves them so, and so does a record lost in a database crash (records do not
   * wait for the WAL flush): nothing else would ever attempt them while this instance
   * lives, since the reaper takes over only the deliveries of instances whose lease ran out.
   * Only those leased more than two leases ago are looked at: an answer still on its way
   * belongs to a younger claim.
   */
  private async releaseOrphans(now: Date): Promise<void> {
    const generation = this.host.generation();
    const leased = await this.repo.leasedBefore(this.host.owner(), new Date(now.getTime() - 2 * this.leaseMs));
    // Held here meanwhile (claimed again after a hand-back) or under a new name: not orphans.
    const orphans = leased.filter((id) => !this.host.holds(id) && !this.unreleased.has(id));
    if (orphans.length === 0 || generation !== this.host.generation()) return;
    this.log.warn({ deliveries: orphans.length }, 'deliveries leased to this instance that it does not hold (an answer lost, or a record lost in a database crash): handed back');
    await this.repo.release(this.host.owner(), orphans);
    this.host.wake();
  }
}
