/**
 * The delivery engine of one instance. It claims due deliveries from PostgreSQL (never
 * from JetStream: no message is held across an HTTP call) under a lease it keeps renewing,
 * POSTs each with a fresh timestamp and signature, and records the outcomes in batches:
 * one attempt row each, the delivery's next attempt time or, when it is finished, its
 * removal from the queue, and the endpoint's failure count, disabling it at the threshold
 * (domain/endpoint-health.ts).
 *
 * Bounds: at most `perEndpoint` (4) requests in flight to one endpoint, shared among the
 * live instances (slotShare: past 4 instances, each endpoint's slots are with 4 of them,
 * and the others hand its deliveries back and tell them), and `maxInFlight` in all; each
 * endpoint is claimed for separately, up to 128 claims per instance (perEndpoint x
 * CLAIM_AHEAD x 2), so a slow receiver cannot starve the others.
 *
 * Claims: an endpoint this instance works on is topped up when it runs below half its
 * claims, and left alone once a claim found nothing more due for it (`drained`), until
 * something can have made work due (new deliveries, a redelivery, a lease taken over, the
 * poll timer): then the claim also looks for endpoints this instance does not know yet.
 *
 * Intake: new deliveries of an endpoint that is flowing (its queue here would be done within
 * FLOW_HORIZON_MS) are created leased to this instance and start without a claim; those of
 * any other endpoint are created pending. While flowing endpoints have plenty queued, the
 * fan-out waits before its next batch (a second at most), so a burst waits in the event
 * stream rather than being written as pending rows and claimed back.
 *
 * Crash safety: a delivery is leased to this instance while claimed (the instance renews
 * one lease row for all of them); if the instance dies its lease runs out and another
 * instance takes the deliveries over. An instance whose renewals fail starts nothing from
 * two thirds of a lease on; taken over, it goes on under a new name. An attempt sent but
 * not recorded is sent again (at-least-once); an attempt is recorded only together with
 * the removal or rescheduling of its delivery by the instance that still holds it, so no
 * attempt row is ever written twice.
 */
import { monotonicIds } from '@mailroom/contracts';
import type { Clock, Logger, SecretBox } from '@mailroom/platform';
import type { ClaimedJob, DeliveryRepository, FinishedAttempt, NewWorkLease } from '../repo/delivery.repository';
import { parseRetryAfter, type RetryPolicy } from '../domain/retry-policy';
import type { EndpointNow } from '../domain/ports';
import { deliveryHeaders, standardKey } from '../domain/signature';
import { AUTO_DISABLE_REASON } from '../domain/endpoint-health';
import type { PostResult } from './http-client';
import { insertById, type EndpointSlots } from './endpoint-slots';
import { slotShare } from './slot-share';

/**
 * Claims held per request slot: enough queued work to keep the slots busy between claims,
 * and claims large enough that their fixed cost (a round trip, planning) is shared.
 */
export const CLAIM_AHEAD = 16;
/** Every this many leases, an instance looks for deliveries leased to it that it does not hold (see releaseOrphans). */
const ORPHAN_CHECK_LEASES = 2;
/** A record of finished attempts starts at once when this many wait; fewer wait FLUSH_LINGER_MS for company. */
const FLUSH_BATCH = 128;
const FLUSH_LINGER_MS = 20;

export interface Poster {
  post(url: string, body: Buffer, headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult>;
}

export interface DispatcherOptions {
  /** This instance's lease owner name. */
  owner: string;
  maxInFlight: number;
  perEndpoint: number;
  leaseMs: number;
  pollIntervalMs: number;
  shutdownGraceMs: number;
  failureThreshold: number;
  /** Monotonic milliseconds for attempt times and the intake rules (tests); performance.now() by default. */
  monotonic?: () => number;
  /**
   * Tells the other instances to look for due deliveries now (a signal on the bus): this one
   * handed deliveries back, or had new ones created pending, for endpoints it has no slots
   * of. Without it they find them at their next poll.
   */
  wakeOthers?: () => void;
}

/** Signals to the other instances are sent this often at most (a burst of hand-backs is one signal, and one more at the end). */
const WAKE_OTHERS_EVERY_MS = 10;

/**
 * An endpoint is flowing while the work queued for it here would be done within this time
 * (its queue x its time per finished attempt) and none of its attempts has run longer. New
 * deliveries to a flowing endpoint are handed to this instance at once; to any other, they
 * are created pending and claimed when it has room again.
 */
export const FLOW_HORIZON_MS = 2_000;
/**
 * Intake pauses while the queued work of flowing endpoints is at least maxInFlight x this,
 * and resumes at half of it, or after INTAKE_WAIT_MS at most.
 */
export const INTAKE_BACKLOG_PER_SLOT = 4;
export const INTAKE_WAIT_MS = 1_000;
/** Endpoints not flowing named to one fan-out, at most. */
const MAX_PENDING_FOR = 256;
/** Endpoints this instance has no slots of named to one fan-out, at most (beyond those not flowing). */
const MAX_NOT_MINE_FOR = 1_024;
/** How long a change made through this instance is applied to deliveries read before it (longer than any claim or fan-out). */
const CHANGE_MEMORY_MS = 60_000;
/** Weight of the latest interval in an endpoint's time per finished attempt. */
const EWMA_WEIGHT = 0.2;

/** A PostgreSQL data exception (SQLSTATE class 22): a value refused, whatever the retry. */
function isDataException(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && err.code.startsWith('22');
}

export class Dispatcher {
  private readonly claimed = new Map<number, ClaimedJob>();
  /** Queued deliveries that came from a claim (see EndpointSlots.fromClaims). */
  private readonly fromClaim = new WeakSet<ClaimedJob>();
  private readonly endpoints = new Map<string, EndpointSlots>();
  private running = 0;
  /**
   * Endpoints with work and room of their own that the global bound stopped, in the order
   * they were stopped: a freed global slot goes to the first (a line, not a scan of every
   * endpoint per finished attempt).
   */
  private readonly blocked = new Set<string>();
  private readonly attempts = new Set<Promise<void>>();
  private finished: FinishedAttempt[] = [];
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /** Something may have made deliveries due anywhere: the next claim looks beyond the known endpoints. */
  private discoverNext = true;
  private stopped = false;
  /** Cuts the attempts in flight short (shutdown, or a lease not renewed in time); a new one after each cut. */
  private cut = new AbortController();
  private timers: NodeJS.Timeout[] = [];
  private readonly secrets = new Map<string, { sealed: Buffer; secret: { text: string; key: Buffer } }>();
  /**
   * Endpoints changed through this instance: when (monotonic ms) and how they are now, until
   * a record reads them again (or CHANGE_MEMORY_MS at most).
   */
  private readonly changedHere = new Map<string, { at: number; now: EndpointNow }>();
  /** Deliveries to hand back whose release failed (see handBack). */
  private readonly unreleased = new Set<number>();
  /** Deliveries queued here so far, and each queued one's number: a record drops only those queued before it started. */
  private enqueued = 0;
  private readonly queuedAt = new WeakMap<ClaimedJob, number>();
  /** The live instances (lease owners), sorted, as last read; `membersVersion` counts the changes. */
  private members: string[] = [];
  private membersVersion = 0;
  /** How many instances share the endpoints' slots: the live ones, this one counted in. */
  private instances = 1;
  /** Endpoints this instance has no slots of (see slotShare), for `membersVersion`: their deliveries are left to others. */
  private readonly notMine = new Set<string>();
  /** A signal to the other instances was sent within WAKE_OTHERS_EVERY_MS; `again`: another is due at its end. */
  private othersSignal: { timer: NodeJS.Timeout; again: boolean } | undefined;
  /** Reads of the live instances started, and the latest applied. */
  private membersReads = 0;
  private membersApplied = 0;
  /** Work done since the last report (debug level): where the time goes under load. */
  private stats = { claims: 0, claimMs: 0, claimed: 0, adopted: 0, flushes: 0, flushMs: 0, recorded: 0, intakeWaits: 0 };

  private readonly monotonic: () => number;
  /** This instance's lease owner name: a new one after its lease ran out (its deliveries were handed to others). */
  private owner: string;
  private ownerGeneration = 0;
  /**
   * Until when (monotonic ms) this instance may start attempts and take deliveries: two
   * thirds of a lease after the last renewal was sent. Past it another instance may already
   * have taken its deliveries over (if renewals keep failing), so it starts nothing more.
   * Infinity until start().
   */
  private leaseValidUntil = Infinity;
  /**
   * Past this (monotonic ms), five sixths of a lease after the last renewal was sent, the
   * attempts still in flight are cut short (see cutIfLapsed). Infinity until start().
   */
  private leaseCutAt = Infinity;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** When (monotonic ms) this instance last looked for deliveries leased to it that it does not hold. */
  private orphansCheckedAt = -Infinity;
  private beating: Promise<void> | undefined;
  /** Attempt ids increase in the order attempts start, also within a millisecond: records list newest first by id. */
  private readonly newAttemptId = monotonicIds('delivery');
  /** Deliveries queued here, not yet started, all endpoints together. */
  private queued = 0;
  /** The fan-out's wait for room, while there is one. */
  private intake: { room: Promise<void>; low: number; release: () => void } | undefined;

  constructor(
    private readonly repo: DeliveryRepository,
    private readonly http: Poster,
    private readonly box: SecretBox,
    private readonly retries: RetryPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: DispatcherOptions,
  ) {
    this.monotonic = opts.monotonic ?? (() => performance.now());
    this.owner = opts.owner;
  }

  /** Registers this instance's lease first: deliveries are leased to it from then on. */
  async start(): Promise<void> {
    const sentAt = this.monotonic();
    await this.repo.heartbeat(this.owner, this.leaseFrom(this.clock.now()));
    this.renewedAt(sentAt);
    await this.refreshMembers();
    this.timers.push(setInterval(() => this.cutIfLapsed(), Math.max(25, Math.floor(this.opts.leaseMs / 12))).unref());
    this.timers.push(setInterval(() => this.wake(), this.opts.pollIntervalMs).unref());
    this.timers.push(setInterval(() => void this.refreshMembers(), this.opts.pollIntervalMs).unref());
    this.heartbeatTimer = setInterval(() => void (this.beating ??= this.heartbeat().finally(() => (this.beating = undefined))), Math.max(100, Math.floor(this.opts.leaseMs / 3))).unref();
    if (this.log.isLevelEnabled('debug')) {
      this.timers.push(
        setInterval(() => {
          const s = this.stats;
          if (s.claims || s.adopted || s.flushes) this.log.debug({ ...s, claimMs: Math.round(s.claimMs), flushMs: Math.round(s.flushMs), in_flight: this.running, claimed_now: this.claimed.size }, 'dispatcher stats (5 s)');
          this.stats = { claims: 0, claimMs: 0, claimed: 0, adopted: 0, flushes: 0, flushMs: 0, recorded: 0, intakeWaits: 0 };
        }, 5_000).unref(),
      );
    }
    this.wake();
  }

  /**
   * Looks for due deliveries now (coalesced: one claim runs at a time). `soft` wakes come
   * from this instance's own progress (a queue ran low, a slot freed) and top up the known
   * endpoints not drained; anything that can make work due anywhere (new deliveries,
   * redelivery, a lease taken over, the poll timer) wakes it for real.
   */
  wake(soft = false): void {
    if (this.stopped) return;
    if (!soft) {
      this.discoverNext = true;
      for (const slots of this.endpoints.values()) slots.drained = false;
    }
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimLoop().finally(() => {
      this.claiming = undefined;
      // A wake that came after the loop's last look, before this ran, found it still running
      // and only asked it to go on: it starts the next loop here rather than wait for a poll.
      if (this.claimAgain) this.wake(true);
    });
  }

  get inFlight(): number {
    return this.running;
  }

  /**
   * A lease for deliveries the fan-out creates already claimed, when there is room for them:
   * all but those to endpoints not flowing, which are created pending.
   */
  leaseForNewWork(): NewWorkLease | undefined {
    if (this.stopped || !this.leaseValid() || this.claimed.size >= this.opts.maxInFlight * CLAIM_AHEAD) return undefined;
    const now = this.monotonic();
    const pendingFor: string[] = [];
    for (const [id, slots] of this.endpoints) {
      // Each new delivery is compared with the list: it stays short. Past it, a slow endpoint's
      // deliveries are leased and wait here, within the bound on claimed deliveries above.
      if (pendingFor.length >= MAX_PENDING_FOR) break;
      if (!this.flowing(slots, now)) pendingFor.push(id);
    }
    // Endpoints this instance has no slots of: created pending, for the instances that have
    // (up to a bound of their own; past it, their new deliveries are leased here and handed back).
    let notMine = 0;
    for (const id of this.notMine) {
      if (++notMine > MAX_NOT_MINE_FOR) break;
      pendingFor.push(id);
    }
    return { owner: this.owner, pendingFor, issuedAt: this.monotonic() };
  }

  /**
   * Undefined while this instance wants new work; else a promise that resolves when the
   * queued work of its flowing endpoints is down to half the mark, or after
   * INTAKE_WAIT_MS (a slow endpoint is not flowing, so it cannot hold intake up for long).
   */
  whenRoomForNewWork(): Promise<void> | undefined {
    const high = this.opts.maxInFlight * INTAKE_BACKLOG_PER_SLOT;
    if (this.stopped || this.intake || this.flowingBacklog(this.monotonic()) < high) return this.intake?.room;
    this.stats.intakeWaits++;
    const until = this.monotonic() + INTAKE_WAIT_MS;
    let release!: () => void;
    const room = new Promise<void>((resolve) => (release = resolve));
    // Checked as attempts finish (all queues together: cheap) and every 5 ms (flowing endpoints only, and the time limit).
    const timer = setInterval(() => {
      const now = this.monotonic();
      if (this.stopped || now >= until || this.flowingBacklog(now) <= high / 2) this.intake?.release();
    }, 5);
    this.intake = {
      room,
      low: high / 2,
      release: () => {
        clearInterval(timer);
        this.intake = undefined;
        release();
      },
    };
    return room;
  }

  private flowing(slots: EndpointSlots, now: number): boolean {
    if (slots.starts.some((t) => now - t > FLOW_HORIZON_MS)) return false;
    return slots.queue.length * (slots.msPerAttempt ?? 0) <= FLOW_HORIZON_MS;
  }

  private flowingBacklog(now: number): number {
    let n = 0;
    for (const slots of this.endpoints.values()) if (slots.queue.length && this.flowing(slots, now)) n += slots.queue.length;
    return n;
  }

  /**
   * The fan-out created deliveries pending for these endpoints (committed; `leased`: under a
   * lease of this instance): this instance looks for them, and so do the others if some are
   * for endpoints it has no slots of, or if it gave no lease (it is full, or its lease may
   * have run out: all were created pending, for whichever instance has room).
   */
  createdPending(endpointIds: readonly string[], leased: boolean): void {
    this.wake();
    if (!leased || endpointIds.some((id) => !this.hasSlots(id))) this.signalOthers();
  }

  /** Deliveries were queued outside the fan-out (a redelivery, a recovery): this instance looks now, and so do the others if it has no slots of some of them. */
  wakeFor(endpointId: string): void {
    this.wake();
    if (!this.hasSlots(endpointId)) this.signalOthers();
  }

  /** Takes deliveries created leased to this instance (committed): they start as slots allow. */
  adopt(jobs: ClaimedJob[], lease: NewWorkLease): void {
    // Leased under a name this instance has given up (its lease ran out meanwhile): the reaper hands them back.
    if (lease.owner !== this.owner) return;
    if (this.stopped) {
      void this.repo.release(this.owner, jobs.map((j) => j.id)).catch(() => {});
      return;
    }
    this.stats.adopted += jobs.length;
    this.enqueueAll(jobs, false, lease.issuedAt ?? -Infinity);
  }

  private async claimLoop(): Promise<void> {
    const full = this.opts.perEndpoint * CLAIM_AHEAD * 2;
    do {
      this.claimAgain = false;
      // Claimed work queues in memory ahead of the requests, so a busy endpoint never waits for
      // a claim round trip; bounded per endpoint, so a slow one holds a bounded number.
      let room = this.opts.maxInFlight * CLAIM_AHEAD - this.claimed.size;
      if (room <= 0 || !this.leaseValid()) return;
      const discover = this.discoverNext;
      const asks: { id: string; room: number }[] = [];
      for (const [id, slots] of this.endpoints) {
        // None of its slots here (it has attempts still running): its deliveries are for the instances that have.
        if (this.shareOf(id, slots) === 0) continue;
        // Only claimed deliveries count: new work handed over does not keep older due ones waiting.
        const held = slots.fromClaims;
        // A top-up waits until an endpoint is down to half: a claim costs a round trip whatever its size.
        if (room <= 0 || (!discover && (slots.drained || held > full / 2))) continue;
        const want = Math.min(full - held, room);
        if (want <= 0) continue;
        asks.push({ id, room: want });
        room -= want;
      }
      const search = discover && room > 0 ? { endpoints: Math.max(1, Math.floor(room / full)), room: Math.min(full, room), exclude: [...this.endpoints.keys(), ...this.notMine] } : undefined;
      if (asks.length === 0 && !search) return;
      if (discover) this.discoverNext = false;
      let jobs: ClaimedJob[];
      let readAt: number;
      try {
        const t0 = performance.now();
        const owner = this.owner;
        readAt = this.monotonic();
        jobs = await this.repo.claim({ owner, now: this.clock.now(), endpoints: asks, discover: search });
        // Claimed under a name given up meanwhile (the lease ran out): the reaper hands them back.
        if (owner !== this.owner) {
          this.claimAgain = true;
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
      if (this.stopped) {
        await this.repo.release(this.owner, jobs.map((j) => j.id)).catch(() => {});
        return;
      }
      const got = new Map<string, number>();
      for (const job of jobs) got.set(job.endpoint_id, (got.get(job.endpoint_id) ?? 0) + 1);
      for (const ask of asks) {
        const slots = this.endpoints.get(ask.id);
        if (slots) slots.drained = (got.get(ask.id) ?? 0) < ask.room;
      }
      this.enqueueAll(jobs, true, readAt);
      // Asked for, nothing more due, nothing here: forgotten until new work or a claim finds some.
      for (const ask of asks) {
        const slots = this.endpoints.get(ask.id);
        if (slots?.drained && slots.running === 0 && slots.queue.length === 0) this.endpoints.delete(ask.id);
      }
      if (search) {
        const asked = new Set(asks.map((a) => a.id));
        const found = [...got.keys()].filter((id) => !asked.has(id));
        for (const id of found) {
          const slots = this.endpoints.get(id);
          if (slots) slots.drained = (got.get(id) ?? 0) < search.room;
        }
        // As many endpoints found as asked for: there may be more.
        if (found.length >= search.endpoints) {
          this.discoverNext = true;
          this.claimAgain = true;
        }
      }
    } while (this.claimAgain && !this.stopped);
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.opts.leaseMs);
  }

  /**
   * Queues a delivery in creation order (by id) among its endpoint's: new work goes last,
   * due deliveries claimed from the database before the newer ones queued here.
   * An endpoint first seen through new work (not a claim) has nothing known to claim: its
   * due deliveries, if any, come with a wake that asks for every endpoint (see wake()).
   */
  private enqueue(job: ClaimedJob, fromClaim: boolean, readAt: number): boolean {
    // An endpoint this instance has no slots of: for the instances that have (handed back, and they are told).
    if (!this.hasSlots(job.endpoint_id)) return false;
    // Read (by a claim or fan-out started at `readAt`) before a change known here: the change applies.
    const change = this.changedHere.size ? this.changedHere.get(job.endpoint_id) : undefined;
    if (change && readAt <= change.at) {
      // Handed back rather than dropped: a claim finds out whether the endpoint is still disabled.
      if (!change.now || change.now.disabled) return false;
      job.url = change.now.url;
    }
    this.claimed.set(job.id, job);
    // Held again (a release reported failed may have gone through): not to be handed back.
    if (this.unreleased.size) this.unreleased.delete(job.id);
    this.queuedAt.set(job, ++this.enqueued);
    let slots = this.endpoints.get(job.endpoint_id);
    if (!slots) this.endpoints.set(job.endpoint_id, (slots = { running: 0, queue: [], drained: !fromClaim, fromClaims: 0, starts: [], msPerAttempt: undefined, busySince: undefined, failures: 0, url: job.url, mixedUrls: false, share: 0, shareVersion: -1 }));
    else if (job.url !== slots.url) slots.mixedUrls = true;
    insertById(slots.queue, job);
    if (fromClaim) {
      this.fromClaim.add(job);
      slots.fromClaims++;
    }
    this.queued++;
    this.pump(job.endpoint_id);
    return true;
  }

  /** Enqueues deliveries this instance now holds, read at `readAt`; those of endpoints disabled or deleted since are handed back. */
  private enqueueAll(jobs: ClaimedJob[], fromClaim: boolean, readAt: number): void {
    const refused = jobs.filter((job) => !this.enqueue(job, fromClaim, readAt));
    if (refused.length) this.handBack(refused.map((j) => j.id));
  }

  /**
   * Gives deliveries this instance holds (not queued, not running) back to the database as
   * due, then looks for due work: a claim takes them if their endpoint is enabled and drops
   * them if not. A release that fails is tried again at each renewal, and at stop.
   */
  private handBack(ids: number[]): void {
    const generation = this.ownerGeneration;
    this.repo.release(this.owner, ids).then(
      () => {
        this.wake();
        this.signalOthers();
      },
      (err: unknown) => {
        // Under a name given up since: the reaper hands them back (and this instance may hold them again by now).
        if (generation !== this.ownerGeneration) return;
        for (const id of ids) if (!this.claimed.has(id)) this.unreleased.add(id);
        this.log.warn({ err, deliveries: ids.length }, 'could not hand deliveries back; trying again at the next renewal');
      },
    );
  }

  private pump(endpointId: string): void {
    const slots = this.endpoints.get(endpointId);
    if (!slots || !this.leaseValid()) return;
    while (!this.stopped && slots.running < this.shareOf(endpointId, slots) && slots.queue.length && this.running < this.opts.maxInFlight && slots.failures < this.opts.failureThreshold) {
      const job = slots.queue.shift()!;
      this.queued--;
      if (this.fromClaim.delete(job)) slots.fromClaims--;
      slots.running++;
      this.running++;
      const started = this.monotonic();
      slots.starts.push(started);
      const p = this.attempt(job, slots).finally(() => {
        this.attempts.delete(p);
        slots.running--;
        this.running--;
        slots.starts.splice(slots.starts.indexOf(started), 1);
        const now = this.monotonic();
        if (slots.busySince !== undefined) {
          const took = now - slots.busySince;
          slots.msPerAttempt = slots.msPerAttempt === undefined ? took : slots.msPerAttempt + EWMA_WEIGHT * (took - slots.msPerAttempt);
        }
        slots.busySince = slots.queue.length ? now : undefined;
        if (this.intake && this.queued <= this.intake.low) this.intake.release();
        // Forgotten once idle with nothing more due (or none of its slots here); until then the next top-up asks for it.
        if (slots.running === 0 && slots.queue.length === 0 && (slots.drained || !this.hasSlots(endpointId))) this.endpoints.delete(endpointId);
        // A global slot freed while endpoints wait for one: they go first, in the order they
        // were stopped, and this one after them (it joins the end of the line if it cannot
        // start), so endpoints with long queues do not keep the global slots among themselves.
        for (const id of this.blocked) {
          if (this.running >= this.opts.maxInFlight) break;
          this.blocked.delete(id);
          if (id !== endpointId) this.pump(id);
        }
        this.pump(endpointId);
        if (!slots.drained && slots.fromClaims <= this.opts.perEndpoint * CLAIM_AHEAD) this.wake(true);
      });
      this.attempts.add(p);
    }
    if (slots.queue.length && slots.running < this.shareOf(endpointId, slots) && this.running >= this.opts.maxInFlight) this.blocked.add(endpointId);
  }

  private countInstances(): number {
    return this.members.includes(this.owner) ? this.members.length : this.members.length + 1;
  }

  /** Whether this instance has any of the endpoint's request slots (past perEndpoint instances, some have none). */
  private hasSlots(endpointId: string): boolean {
    if (this.instances <= this.opts.perEndpoint) return true;
    if (this.notMine.has(endpointId)) return false;
    // Known here: its share is cached for the current instances.
    const slots = this.endpoints.get(endpointId);
    if (slots) return this.shareOf(endpointId, slots) > 0;
    if (slotShare(this.members, this.owner, endpointId, this.opts.perEndpoint) > 0) return true;
    this.notMine.add(endpointId);
    return false;
  }

  /** Tells the other instances to look for due deliveries: at once, then at most every WAKE_OTHERS_EVERY_MS. */
  private signalOthers(): void {
    const send = this.opts.wakeOthers;
    if (!send || this.stopped) return;
    if (this.othersSignal) {
      this.othersSignal.again = true;
      return;
    }
    send();
    const signal = {
      again: false,
      timer: setTimeout(() => {
        this.othersSignal = undefined;
        if (signal.again) this.signalOthers();
      }, WAKE_OTHERS_EVERY_MS),
    };
    this.othersSignal = signal;
  }

  private shareOf(endpointId: string, slots: EndpointSlots): number {
    if (slots.shareVersion !== this.membersVersion) {
      slots.share = slotShare(this.members, this.owner, endpointId, this.opts.perEndpoint);
      slots.shareVersion = this.membersVersion;
    }
    return slots.share;
  }

  /**
   * Reads which instances are alive (their lease rows): an endpoint's requests in flight are
   * shared among them. A change applies to the next attempts; ones running finish.
   */
  private async refreshMembers(): Promise<void> {
    const read = ++this.membersReads;
    let members: string[];
    try {
      members = await this.repo.liveWorkers(this.clock.now());
    } catch (err) {
      this.log.warn({ err }, 'could not read the live webhooks instances');
      return;
    }
    // A read started before one already applied (the poll's, overtaken by a takeover's) is older: not applied.
    if (read < this.membersApplied) return;
    this.membersApplied = read;
    if (members.join('\n') === this.members.join('\n')) return;
    const first = this.membersVersion === 0;
    this.members = members;
    this.membersVersion++;
    this.instances = this.countInstances();
    if (!first || members.length > 1) this.log.info({ instances: members.length }, 'webhooks instances changed: each endpoint\'s requests in flight are shared among them');
    this.sharesChanged();
  }

  /**
   * The shares changed (instances came or went, or this one has a new name): endpoints it no
   * longer has slots of have their queued deliveries handed back to the instances that have
   * (attempts running finish); the others go on with their new share.
   */
  private sharesChanged(): void {
    this.notMine.clear();
    const handed: number[] = [];
    for (const [id, slots] of [...this.endpoints]) {
      if (this.hasSlots(id)) {
        this.pump(id);
        continue;
      }
      handed.push(...this.emptyQueue(slots).map((j) => j.id));
      slots.drained = true;
      if (slots.running === 0) this.endpoints.delete(id);
    }
    if (handed.length) {
      if (this.intake && this.queued <= this.intake.low) this.intake.release();
      this.handBack(handed);
    }
  }

  private secretOf(job: ClaimedJob): { text: string; key: Buffer } {
    const cached = this.secrets.get(job.endpoint_id);
    if (cached && cached.sealed.equals(job.secret_sealed)) return cached.secret;
    const text = this.box.open(job.secret_sealed, job.endpoint_id).toString('utf8');
    const secret = { text, key: standardKey(text) };
    if (this.secrets.size > 10_000) this.secrets.clear();
    this.secrets.set(job.endpoint_id, { sealed: job.secret_sealed, secret });
    return secret;
  }

  private async attempt(job: ClaimedJob, slots: EndpointSlots): Promise<void> {
    const generation = this.ownerGeneration;
    const signal = this.cut.signal;
    const attempt = job.attempts + 1;
    const at = this.clock.now();
    const timestamp = Math.floor(at.getTime() / 1000);
    let result: PostResult;
    try {
      result = await this.http.post(job.url, job.body, deliveryHeaders(this.secretOf(job), job.event_id, timestamp, job.body), signal);
    } catch (err) {
      // Not the receiver's fault (e.g. a secret that no longer opens): recorded as a failed attempt, retried on schedule.
      this.log.error({ err, endpoint_id: job.endpoint_id, event_id: job.event_id }, 'could not attempt delivery');
      result = { ok: false, httpStatus: 0, error: 'internal_error', timedOut: false, durationMs: 0 };
    }
    // Cut short: nothing is recorded, the delivery is handed back and sent again. By shutdown,
    // stop() hands it back; by a lease not renewed in time, it goes back now, or, if the lease
    // ran out meanwhile (a new name), the instance that took the old name's deliveries has it.
    if (result.error === 'aborted') {
      if (!this.stopped) {
        this.forget(job);
        if (generation === this.ownerGeneration) this.handBack([job.id]);
      }
      return;
    }
    // Made under a name given up meanwhile (its lease was taken over): its record would change
    // nothing the new holder has, or, if this instance holds the delivery again, be a second row.
    if (generation !== this.ownerGeneration) {
      this.forget(job);
      return;
    }
    slots.failures = result.ok ? 0 : slots.failures + 1;
    let retryAt: Date | null = null;
    if (!result.ok) {
      const now = this.clock.now();
      const delay = this.retries.delayAfter(
        attempt,
        { timedOut: result.timedOut, httpStatus: result.httpStatus, retryAfterSeconds: parseRetryAfter(result.retryAfter, now) },
        job.max_attempts,
      );
      if (delay !== undefined) retryAt = new Date(now.getTime() + delay);
    }
    this.finished.push({
      attemptId: this.newAttemptId(at.getTime()),
      job,
      attempt,
      trigger: attempt === 1 && job.origin !== 'event' ? 'manual' : 'scheduled',
      ok: result.ok,
      httpStatus: result.httpStatus,
      error: result.error ?? null,
      responseBody: result.responseBody ?? null,
      durationMs: result.durationMs,
      at,
      retryAt,
    });
    this.scheduleFlush();
  }

  /**
   * Records finished attempts in batches: at once when FLUSH_BATCH are waiting (or when
   * stopping), else after FLUSH_LINGER_MS, so a record (one statement) is shared by many
   * attempts under load and a lone attempt waits 20 ms at most. Nothing waits for a record
   * but the attempt's row: the next request to the endpoint has already started. (An
   * attempt not yet recorded when the process dies is sent again: at-least-once.)
   */
  private scheduleFlush(): void {
    if (this.flushing || this.finished.length === 0) return;
    if (this.finished.length >= FLUSH_BATCH || this.stopped) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      this.startFlush();
    } else {
      this.flushTimer ??= setTimeout(() => {
        this.flushTimer = undefined;
        if (!this.flushing && this.finished.length) this.startFlush();
      }, FLUSH_LINGER_MS);
    }
  }

  private startFlush(): void {
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (!this.stopped) this.scheduleFlush();
    });
  }

  /** Writes batches while full ones are waiting (all of them when stopping). */
  private async flushLoop(): Promise<void> {
    let failures = 0;
    do {
      const batch = this.finished;
      this.finished = [];
      const generation = this.ownerGeneration;
      try {
        const t0 = performance.now();
        await this.record(batch);
        this.stats.flushes++;
        this.stats.flushMs += performance.now() - t0;
        this.stats.recorded += batch.length;
        failures = 0;
      } catch (err) {
        failures++;
        this.log.warn({ err, attempts: batch.length }, 'recording attempts failed; retrying');
        // A value PostgreSQL refuses would fail the batch forever, and every record after it:
        // the receivers' response bodies are the only text from outside, so they go.
        const refused = isDataException(err) && batch.some((a) => a.responseBody !== null);
        // Attempts made under a name given up since are not recorded (see attempt()).
        if (generation !== this.ownerGeneration) for (const a of batch) this.forget(a.job);
        else this.finished = [...(refused ? batch.map((a) => ({ ...a, responseBody: null })) : batch), ...this.finished];
        if (this.stopped && failures >= 3) return;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** failures)));
        continue;
      }
      for (const a of batch) this.forget(a.job);
      this.wake(true);
    } while (this.finished.length >= FLUSH_BATCH || (this.stopped && this.finished.length));
  }

  /**
   * Records a batch, then follows what the record says of its endpoints: disabled (now, or
   * by a user through another instance) or deleted, their deliveries queued here are
   * dropped; a new URL is where the queued ones go; the failure count is the database's.
   */
  private async record(batch: FinishedAttempt[]): Promise<void> {
    const startedAt = this.monotonic();
    const queuedBefore = this.enqueued;
    const endpoints = await this.repo.record(this.owner, batch, { threshold: this.opts.failureThreshold, reason: AUTO_DISABLE_REASON, now: this.clock.now() });
    const byId = new Map(endpoints.map((e) => [e.id, e]));
    for (const e of endpoints) if (e.disabledNow) this.log.warn({ endpoint_id: e.id, threshold: this.opts.failureThreshold }, 'endpoint disabled after consecutive failures');
    // Each endpoint of the batch as the record read it (undefined: deleted), and when that read started.
    let reads = [...new Set(batch.map((a) => a.job.endpoint_id))].map((id) => ({ id, e: byId.get(id), readAt: startedAt }));
    // A change made here after a read started stands (it was applied when made).
    const changedAfter = (id: string, readAt: number) => (this.changedHere.get(id)?.at ?? -Infinity) >= readAt;
    // Changed here while the record ran: which of the two came last is not known from here,
    // so those endpoints are read again (rare: a PATCH or DELETE during a record).
    const again = reads.filter((r) => changedAfter(r.id, r.readAt)).map((r) => r.id);
    if (again.length) {
      const rereadAt = this.monotonic();
      try {
        const fresh = new Map((await this.repo.endpointStates(again)).map((e) => [e.id, e]));
        reads = reads.map((r) => (again.includes(r.id) ? { id: r.id, e: fresh.get(r.id), readAt: rereadAt } : r));
      } catch (err) {
        this.log.warn({ err }, 'could not read changed endpoints again');
      }
    }
    const unrecorded = this.unrecordedFailures();
    for (const { id, e, readAt } of reads) {
      if (changedAfter(id, readAt)) continue;
      if (!e) {
        // Deleted: nothing of it is worth keeping, whenever it was read.
        this.changedHere.set(id, { at: this.monotonic(), now: undefined });
        this.follow(id, undefined);
        continue;
      }
      const later = unrecorded.get(id);
      const view = { url: e.url, disabled: e.disabled, consecutiveFailures: (later?.success ? 0 : e.consecutiveFailures) + (later?.failures ?? 0) };
      const entry = this.changedHere.get(id);
      // Found disabled: deliveries read before now may have been read before the disable; they go back as they arrive.
      if (e.disabled) this.changedHere.set(id, { at: this.monotonic(), now: view });
      // The latest view, for deliveries read before a change made here.
      else if (entry) entry.now = view;
      this.follow(id, view, queuedBefore);
    }
  }

  /** Attempts finished here and not yet recorded, per endpoint: whether one succeeded, and the failures after the last success. */
  private unrecordedFailures(): Map<string, { success: boolean; failures: number }> {
    const since = new Map<string, { success: boolean; failures: number }>();
    for (const a of this.finished) {
      const s = since.get(a.job.endpoint_id) ?? { success: false, failures: 0 };
      if (a.ok) Object.assign(s, { success: true, failures: 0 });
      else s.failures++;
      since.set(a.job.endpoint_id, s);
    }
    return since;
  }

  /**
   * An endpoint was changed through this instance (committed): its deliveries queued here
   * follow at once, and so do those a claim or fan-out that read it before the change
   * hands over after it (see enqueue), until a record reads it again.
   */
  endpointChanged(endpointId: string, now: EndpointNow): void {
    this.changedHere.set(endpointId, { at: this.monotonic(), now });
    this.follow(endpointId, now);
  }

  /**
   * An endpoint changed (or may have): its deliveries queued here, not yet started, follow.
   * Disabled or deleted, they are dropped (a disable cancels what is pending, a delete
   * removes everything); with a new URL, they go there. Attempts already running finish.
   * `now.consecutiveFailures` is the count to go on from. With `queuedBefore` (a record's
   * view of a disabled endpoint, read when it started), only deliveries queued before then
   * are dropped; later ones are handed back to the database (the endpoint may have been
   * re-enabled through another instance meanwhile).
   */
  private follow(endpointId: string, now: EndpointNow, queuedBefore = Infinity): void {
    const slots = this.endpoints.get(endpointId);
    if (!slots) return;
    if (now && !now.disabled) {
      slots.failures = now.consecutiveFailures;
      if (now.url !== slots.url || slots.mixedUrls) {
        slots.url = now.url;
        slots.mixedUrls = false;
        for (const job of slots.queue) job.url = now.url;
      }
      this.pump(endpointId);
      return;
    }
    // Nothing more starts: a disabled endpoint gets no new deliveries, and re-enabled it starts a new count.
    slots.failures = 0;
    slots.drained = true;
    const emptied = this.emptyQueue(slots);
    if (slots.running === 0) this.endpoints.delete(endpointId);
    if (emptied.length === 0) return;
    const dropped = emptied.filter((job) => (this.queuedAt.get(job) ?? 0) <= queuedBefore);
    const later = emptied.filter((job) => (this.queuedAt.get(job) ?? 0) > queuedBefore);
    if (this.intake && this.queued <= this.intake.low) this.intake.release();
    // If this fails they stay leased here; handed back when this instance stops or dies, a claim finds their endpoint disabled or gone and drops them.
    if (dropped.length) this.repo.discard(this.owner, dropped.map((j) => j.id)).catch((err: unknown) => this.log.warn({ err, endpoint_id: endpointId }, 'could not drop the deliveries of a disabled or deleted endpoint'));
    // Queued after the record read the endpoint: whether they were read before or after it
    // changed is not known here, so they go back to the database, where a claim drops them
    // if the endpoint is still disabled and takes them if not.
    if (later.length) this.handBack(later.map((j) => j.id));
  }

  private leaseValid(): boolean {
    return this.monotonic() < this.leaseValidUntil;
  }

  /** A renewal sent at `sentAt` (monotonic ms) went through. */
  private renewedAt(sentAt: number): void {
    this.leaseValidUntil = sentAt + (this.opts.leaseMs * 2) / 3;
    this.leaseCutAt = sentAt + (this.opts.leaseMs * 5) / 6;
  }

  /**
   * Renewals have failed for five sixths of a lease: soon another instance may find the lease
   * run out and take this one's deliveries over, and send them while the attempts started
   * here are still waiting for their receivers (up to the 30 s deadline). They are cut short
   * now and handed back (or left to that instance), so no delivery is in flight twice and no
   * endpoint has more than its requests in flight. Checked every twelfth of a lease, so the
   * cut comes before the lease runs out.
   */
  private cutIfLapsed(): void {
    if (this.stopped || this.running === 0 || this.monotonic() < this.leaseCutAt) return;
    this.log.warn({ in_flight: this.running }, 'lease not renewed in time: attempts in flight cut short and handed back, to be sent again');
    this.cutAttempts();
  }

  private cutAttempts(): void {
    const cut = this.cut;
    this.cut = new AbortController();
    cut.abort();
  }

  /**
   * Renews this instance's lease. If its row is gone, another instance found the lease run
   * out and took its deliveries over (renewals failed for a whole lease: the database was
   * unreachable, or the process stalled): what it has not started is dropped here, without
   * touching the database, and it goes on under a new name, so a late record of an attempt
   * made under the old one changes nothing.
   */
  private async heartbeat(): Promise<void> {
    const forgetBefore = this.monotonic() - CHANGE_MEMORY_MS;
    for (const [id, c] of this.changedHere) if (c.at < forgetBefore) this.changedHere.delete(id);
    const sentAt = this.monotonic();
    try {
      const now = this.clock.now();
      if (!(await this.repo.renew(this.owner, this.leaseFrom(now)))) {
        this.leaseLost();
        await this.repo.heartbeat(this.owner, this.leaseFrom(this.clock.now()));
        // Its old name is gone from the live instances and the new one is in: the shares change now, not at the next poll.
        await this.refreshMembers();
      }
      // Run out before or during this renewal (a slow database): attempts that finished meanwhile started nothing.
      const lapsed = !this.leaseValid();
      this.renewedAt(sentAt);
      if (lapsed && !this.stopped) {
        this.log.info('lease renewed again: delivering');
        for (const id of [...this.endpoints.keys()]) this.pump(id);
        this.wake();
      }
      if (this.unreleased.size) {
        const ids = [...this.unreleased];
        await this.repo.release(this.owner, ids);
        for (const id of ids) this.unreleased.delete(id);
        this.wake();
      }
      const reaped = await this.repo.reapExpired(this.owner, now);
      if (reaped) {
        this.log.info({ deliveries: reaped }, 'took over deliveries of a worker whose lease ran out');
        this.wake();
      }
      if (this.monotonic() - this.orphansCheckedAt >= ORPHAN_CHECK_LEASES * this.opts.leaseMs) {
        this.orphansCheckedAt = this.monotonic();
        await this.releaseOrphans(now);
      }
    } catch (err) {
      this.log.warn({ err, starts_again: this.leaseValid() }, 'lease renewal failed');
    }
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
    const generation = this.ownerGeneration;
    const leased = await this.repo.leasedBefore(this.owner, new Date(now.getTime() - 2 * this.opts.leaseMs));
    // Held here meanwhile (claimed again after a hand-back) or under a new name: not orphans.
    const orphans = leased.filter((id) => !this.claimed.has(id) && !this.unreleased.has(id));
    if (orphans.length === 0 || generation !== this.ownerGeneration) return;
    this.log.warn({ deliveries: orphans.length }, 'deliveries leased to this instance that it does not hold (an answer lost, or a record lost in a database crash): handed back');
    await this.repo.release(this.owner, orphans);
    this.wake();
  }

  /** Takes an endpoint's queued (not started) deliveries out of this instance's hands and returns them. */
  private emptyQueue(slots: EndpointSlots): ClaimedJob[] {
    const jobs = slots.queue;
    slots.queue = [];
    slots.fromClaims = 0;
    this.queued -= jobs.length;
    for (const job of jobs) {
      this.forget(job);
      this.fromClaim.delete(job);
    }
    return jobs;
  }

  /** No longer held here: this copy of the delivery (the same id may be held again, as another copy). */
  private forget(job: ClaimedJob): void {
    if (this.claimed.get(job.id) === job) this.claimed.delete(job.id);
  }

  private leaseLost(): void {
    const old = this.owner;
    this.owner = `${this.opts.owner}.${++this.ownerGeneration}`;
    // Nothing starts until the new name is registered, and what runs under the old one stops:
    // its deliveries are another instance's now.
    this.leaseValidUntil = -Infinity;
    this.leaseCutAt = -Infinity;
    this.cutAttempts();
    let dropped = 0;
    for (const [id, slots] of this.endpoints) {
      dropped += this.emptyQueue(slots).length;
      slots.drained = false;
      // Its unrecorded failures are dropped with the name: the first record under the new one brings the database's count.
      slots.failures = 0;
      if (slots.running === 0) this.endpoints.delete(id);
    }
    // Leased under the old name: the reaper hands them back.
    this.unreleased.clear();
    // Finished under the old name, not yet recorded: not recorded at all (see attempt()).
    for (const a of this.finished) this.forget(a.job);
    this.finished = [];
    // The name is part of each endpoint's share.
    this.membersVersion++;
    this.instances = this.countInstances();
    this.notMine.clear();
    this.intake?.release();
    this.log.warn({ old_owner: old, owner: this.owner, dropped }, "this instance's lease ran out and its deliveries were taken over: unstarted ones dropped here, going on under a new name");
  }

  /**
   * Stops claiming, lets attempts in flight finish (up to the grace period, then cuts them
   * short), records what finished, and hands every delivery not recorded back as due.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.othersSignal) clearTimeout(this.othersSignal.timer);
    // The lease is renewed until the end: past it, another instance would take over attempts still finishing here.
    for (const t of this.timers) clearInterval(t);
    this.intake?.release();
    await this.claiming;
    let timer: NodeJS.Timeout | undefined;
    const inFlight = Promise.allSettled([...this.attempts]);
    const graceful = await Promise.race([
      inFlight.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.opts.shutdownGraceMs))),
    ]);
    clearTimeout(timer);
    if (!graceful) {
      this.log.warn({ in_flight: this.running }, 'attempts still running at the end of the grace period: cut short, to be sent again');
      this.cutAttempts();
      await Promise.allSettled([...this.attempts]);
    }
    clearTimeout(this.flushTimer);
    this.scheduleFlush();
    await this.flushing;
    const leftover = [...this.claimed.keys(), ...this.unreleased];
    clearInterval(this.heartbeatTimer);
    await this.beating;
    try {
      await this.repo.release(this.owner, leftover);
      // Nothing is leased to this instance any more.
      await this.repo.retire(this.owner);
      // What it handed back is due now: the others look at once, not at their next poll.
      if (leftover.length) this.opts.wakeOthers?.();
    } catch (err) {
      this.log.warn({ err }, 'could not hand deliveries back; their lease will run out');
    }
    this.claimed.clear();
    this.endpoints.clear();
    this.queued = 0;
  }
}
