/**
 * The claims of one instance: when to look in PostgreSQL for due deliveries, what to ask for
 * (claim-plan.ts), and what the answer says of each endpoint asked about. One claim runs at
 * a time; wakes that come while it runs make it go round once more.
 *
 * An endpoint this instance works on is topped up when it runs below half its claims, and
 * left alone once a claim found nothing more due for it (`drained`), until something can
 * have made work due (new deliveries, a redelivery, a lease taken over, the poll timer):
 * then the claim also looks for endpoints this instance does not know yet.
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { ClaimedJob, DeliveryRepository } from '../repo/delivery.repository';
import type { EndpointSlots } from './endpoint-slots';
import { planClaim } from './claim-plan';

export interface ClaimerHost {
  /** The name this instance holds deliveries under now. */
  owner(): string;
  /** Whether this instance may hold deliveries now (its lease is valid). */
  leaseValid(): boolean;
  /** Deliveries this instance may still take. */
  room(): number;
  /** Stopping: what a claim brings back is released, and no claim starts. */
  stopped(): boolean;
  /** The endpoints known here: claims plan by them and mark them drained. */
  readonly endpoints: Map<string, EndpointSlots>;
  /** Queues the deliveries a claim brought, read when the claim started (`readAt`, monotonic ms). */
  take(jobs: ClaimedJob[], readAt: number): void;
}

export class Claimer {
  private running: Promise<void> | undefined;
  private again = false;
  /** Something may have made deliveries due anywhere: the next claim looks beyond the known endpoints. */
  private discoverNext = true;
  /** Since the last report (debug level). */
  stats = { claims: 0, claimMs: 0, claimed: 0 };

  constructor(
    private readonly repo: DeliveryRepository,
    private readonly host: ClaimerHost,
    /** The most deliveries one endpoint holds from claims. */
    private readonly full: number,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly log: Logger,
  ) {}

  /**
   * Looks for due deliveries now (coalesced). `soft` wakes come from this instance's own
   * progress (a queue ran low, a slot freed) and top up the known endpoints not drained;
   * anything that can make work due anywhere wakes it for real.
   */
  wake(soft = false): void {
    if (this.host.stopped()) return;
    if (!soft) {
      this.discoverNext = true;
      for (const slots of this.host.endpoints.values()) slots.drained = false;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
      // A wake that came after the loop's last look, before this ran, found it still running
      // and only asked it to go on: it starts the next loop here rather than wait for a poll.
      if (this.again) this.wake(true);
    });
  }

  /** The claim running now, if any (stop waits for it). */
  get current(): Promise<void> | undefined {
    return this.running;
  }

  private async loop(): Promise<void> {
    const { host } = this;
    do {
      this.again = false;
      const room = host.room();
      if (room <= 0 || !host.leaseValid()) return;
      const discover = this.discoverNext;
      const plan = planClaim(host.endpoints, room, this.full, discover);
      if (!plan) return;
      if (discover) this.discoverNext = false;
      let jobs: ClaimedJob[];
      let readAt: number;
      try {
        const t0 = performance.now();
        const owner = host.owner();
        readAt = this.monotonic();
        jobs = await this.repo.claim({ owner, now: this.clock.now(), ...plan });
        // Claimed under a name given up meanwhile (the lease ran out): the reaper hands them back.
        if (owner !== host.owner()) {
          this.again = true;
          continue;
        }
        this.stats.claims++;
        this.stats.claimMs += performance.now() - t0;
        this.stats.claimed += jobs.length;
      } catch (err) {
        if (discover) this.discoverNext = true;
        this.log.warn({ err }, 'claiming deliveries failed; retrying at the next poll');
        return;
      }
      if (host.stopped()) {
        await this.repo.release(host.owner(), jobs.map((j) => j.id)).catch(() => {});
        return;
      }
      this.settle(plan, jobs, readAt);
    } while (this.again && !host.stopped());
  }

  /** Queues what a claim brought and marks each endpoint it asked about drained or not. */
  private settle(plan: NonNullable<ReturnType<typeof planClaim>>, jobs: ClaimedJob[], readAt: number): void {
    const { endpoints } = this.host;
    const { endpoints: asks, discover: search } = plan;
    const got = new Map<string, number>();
    for (const job of jobs) got.set(job.endpoint_id, (got.get(job.endpoint_id) ?? 0) + 1);
    for (const ask of asks) {
      const slots = endpoints.get(ask.id);
      if (slots) slots.drained = (got.get(ask.id) ?? 0) < ask.room;
    }
    this.host.take(jobs, readAt);
    // Asked for, nothing more due, nothing here: forgotten until new work or a claim finds some.
    for (const ask of asks) {
      const slots = endpoints.get(ask.id);
      if (slots?.drained && slots.running === 0 && slots.queue.length === 0) endpoints.delete(ask.id);
    }
    if (!search) return;
    const asked = new Set(asks.map((a) => a.id));
    const found = [...got.keys()].filter((id) => !asked.has(id));
    for (const id of found) {
      const slots = endpoints.get(id);
      if (slots) slots.drained = (got.get(id) ?? 0) < search.room;
    }
    // As many endpoints found as asked for: there may be more.
    if (found.length >= search.endpoints) {
      this.discoverNext = true;
      this.again = true;
    }
  }
}
