/**
 * The delivery engine of one instance: the job of a delivery is claim, sign, post, record,
 * and then the next attempt on the retry schedule or the end. Deliveries are rows in
 * PostgreSQL (never held in JetStream across an HTTP call, decisions.md), claimed under
 * this instance's lease (lease.ts), queued here per endpoint in creation order, POSTed with
 * a fresh timestamp and both signatures (domain/signature.ts), and recorded in batches
 * (recorder.ts): one attempt row each, the delivery's next attempt time (domain/retry-policy.ts)
 * or its removal, and the endpoint's failure count, disabling it at the threshold
 * (domain/endpoint-health.ts). New deliveries from the fan-out come through intake.ts;
 * endpoint changes reach the queued deliveries through endpoint-changes.ts; deliveries
 * given back to the database (and orphans) go through hand-backs.ts.
 *
 * Bounds: at most `perEndpoint` (4) requests in flight to one endpoint from this instance
 * (per instance: two instances may send 8 at once), and `maxInFlight` in all; each
 * endpoint is claimed for separately, up to 128 claims per instance (perEndpoint x
 * CLAIM_AHEAD x 2), so a slow receiver cannot starve the others. Several instances share
 * the work through the claims alone: what one creates pending or hands back, the others
 * find at their next poll.
 *
 * When to claim and what to ask for is claimer.ts's.
 *
 * At-least-once: an attempt sent but not recorded is sent again; an attempt is recorded
 * only together with the removal or rescheduling of its delivery by the instance that
 * still holds it, so no attempt row is ever written twice.
 */
import { monotonicIds } from '@mailroom/contracts';
import type { Clock, Logger, SecretBox } from '@mailroom/platform';
import type { ClaimedJob, DeliveryRepository, FinishedAttempt, NewWorkLease } from '../repo/delivery.repository';
import type { RetryPolicy } from '../domain/retry-policy';
import type { EndpointNow } from '../domain/ports';
import { standardKey } from '../domain/signature';
import { AUTO_DISABLE_REASON, failuresAfter } from '../domain/endpoint-health';
import { insertById, type EndpointSlots } from './endpoint-slots';
import { attemptDelivery, tracedAttempt, type AttemptDeps, type Poster } from './attempt';
import { Claimer } from './claimer';
import { AttemptMetrics } from './metrics';
import { Intake } from './intake';
import { InstanceLease } from './lease';
import { AttemptRecorder } from './recorder';
import { EndpointChanges } from './endpoint-changes';
import { HandBacks } from './hand-backs';

/**
 * Claims held per request slot: enough queued work to keep the slots busy between claims,
 * and claims large enough that their fixed cost (a round trip, planning) is shared.
 */
export const CLAIM_AHEAD = 16;
export type { Poster } from './attempt';

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
  private readonly recorder: AttemptRecorder;
  private readonly claimer: Claimer;
  private stopped = false;
  /** Cuts the attempts in flight short (shutdown, or a lease not renewed in time); a new one after each cut. */
  private cut = new AbortController();
  private timers: NodeJS.Timeout[] = [];
  private readonly secrets = new Map<string, { sealed: Buffer; secret: { text: string; key: Buffer } }>();
  /** How endpoints changed, and the view their queued deliveries follow (endpoint-changes.ts). */
  private readonly changes: EndpointChanges;
  /** Deliveries given back to the database, and the orphan check (hand-backs.ts). */
  private readonly handBacks: HandBacks;
  /** Deliveries queued here so far, and each queued one's number: a record drops only those queued before it started. */
  private enqueued = 0;
  private readonly queuedAt = new WeakMap<ClaimedJob, number>();
  /** Work done since the last report (debug level): where the time goes under load. */
  private stats = { adopted: 0, flushes: 0, flushMs: 0, recorded: 0 };

  private readonly monotonic: () => number;
  private readonly lease: InstanceLease;
  private readonly attemptDeps: AttemptDeps;
  private readonly measured = new AttemptMetrics();
  /** Deliveries queued here, not yet started, all endpoints together. */
  private queued = 0;
  private readonly intake: Intake;

  constructor(
    private readonly repo: DeliveryRepository,
    http: Poster,
    private readonly box: SecretBox,
    retries: RetryPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: DispatcherOptions,
  ) {
    this.monotonic = opts.monotonic ?? (() => performance.now());
    this.lease = new InstanceLease(repo, clock, this.monotonic, opts.leaseMs, opts.owner, {
      lapsed: () => this.cutIfLapsed(),
      lost: (old, owner) => this.leaseLost(old, owner),
      resumed: () => this.resumed(),
      renewed: (now) => this.upkeep(now),
    }, log);
    this.attemptDeps = { http, retries, clock, log, newAttemptId: monotonicIds('delivery') };
    this.intake = new Intake(this.endpoints, opts.maxInFlight, this.monotonic);
    this.changes = new EndpointChanges(this.monotonic);
    this.handBacks = new HandBacks(repo, {
      owner: () => this.owner,
      generation: () => this.lease.generation,
      holds: (id) => this.claimed.has(id),
      wake: () => this.wake(),
    }, this.monotonic, opts.leaseMs, log);
    this.claimer = new Claimer(repo, {
      owner: () => this.owner,
      leaseValid: () => this.lease.valid(),
      room: () => this.opts.maxInFlight * CLAIM_AHEAD - this.claimed.size,
      stopped: () => this.stopped,
      endpoints: this.endpoints,
      take: (jobs, readAt) => this.enqueueAll(jobs, true, readAt),
    }, opts.perEndpoint * CLAIM_AHEAD * 2, clock, this.monotonic, log);
    this.recorder = new AttemptRecorder({
      write: (batch) => this.record(batch),
      generation: () => this.lease.generation,
      settled: (batch, recorded) => {
        for (const a of batch) this.forget(a.job);
        if (recorded) this.wake(true);
      },
    }, log);
  }

  /** Registers this instance's lease first: deliveries are leased to it from then on. */
  async start(): Promise<void> {
    await this.lease.start();
    this.timers.push(setInterval(() => this.wake(), this.opts.pollIntervalMs).unref());
    if (this.log.isLevelEnabled('debug')) {
      this.timers.push(
        setInterval(() => {
          const s = { ...this.claimer.stats, ...this.stats };
          if (s.claims || s.adopted || s.flushes) this.log.debug({ ...s, claimMs: Math.round(s.claimMs), flushMs: Math.round(s.flushMs), in_flight: this.running, claimed_now: this.claimed.size, intake_waits_total: this.intake.waits }, 'dispatcher stats (5 s)');
          this.stats = { adopted: 0, flushes: 0, flushMs: 0, recorded: 0 };
          this.claimer.stats = { claims: 0, claimMs: 0, claimed: 0 };
        }, 5_000).unref(),
      );
    }
    this.wake();
  }

  /** Looks for due deliveries now (claimer.ts): `soft` from this instance's own progress, else because work may be due anywhere. */
  wake(soft = false): void {
    this.claimer.wake(soft);
  }

  /** The name this instance holds deliveries under. */
  private get owner(): string {
    return this.lease.owner;
  }

  get inFlight(): number {
    return this.running;
  }

  /**
   * A lease for deliveries the fan-out creates already claimed, when there is room for them:
   * all but those to endpoints not flowing, which are created pending.
   */
  leaseForNewWork(): NewWorkLease | undefined {
    if (this.stopped || !this.lease.valid() || this.claimed.size >= this.opts.maxInFlight * CLAIM_AHEAD) return undefined;
    return { owner: this.owner, pendingFor: this.intake.pendingFor(), issuedAt: this.monotonic() };
  }

  /** Undefined while this instance wants new work; else a promise that resolves when it has room again (intake.ts). */
  whenRoomForNewWork(): Promise<void> | undefined {
    return this.stopped ? undefined : this.intake.whenRoom();
  }

  /**
   * The fan-out created deliveries pending (committed): this instance looks for them now;
   * the others, if this one has no room, at their next poll.
   */
  createdPending(): void {
    this.wake();
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

  /**
   * Queues a delivery in creation order (by id) among its endpoint's: new work goes last,
   * due deliveries claimed from the database before the newer ones queued here.
   * An endpoint first seen through new work (not a claim) has nothing known to claim: its
   * due deliveries, if any, come with a wake that asks for every endpoint (see wake()).
   */
  private enqueue(job: ClaimedJob, fromClaim: boolean, readAt: number): boolean {
    // Read (by a claim or fan-out started at `readAt`) before a change known here: the change applies.
    const change = this.changes.since(job.endpoint_id, readAt);
    if (change) {
      // Handed back rather than dropped: a claim finds out whether the endpoint is still disabled.
      if (!change.now || change.now.disabled) return false;
      job.url = change.now.url;
    }
    this.claimed.set(job.id, job);
    // Held again (a release reported failed may have gone through): not to be handed back.
    this.handBacks.heldAgain(job.id);
    this.queuedAt.set(job, ++this.enqueued);
    let slots = this.endpoints.get(job.endpoint_id);
    if (!slots) this.endpoints.set(job.endpoint_id, (slots = { running: 0, queue: [], drained: !fromClaim, fromClaims: 0, starts: [], msPerAttempt: undefined, busySince: undefined, failures: 0, url: job.url, mixedUrls: false }));
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

  /** Gives deliveries this instance holds (not queued, not running) back to the database as due (hand-backs.ts). */
  private handBack(ids: number[]): void {
    this.handBacks.give(ids);
  }

  private pump(endpointId: string): void {
    const slots = this.endpoints.get(endpointId);
    if (!slots || !this.lease.valid()) return;
    while (!this.stopped && slots.running < this.opts.perEndpoint && slots.queue.length && this.running < this.opts.maxInFlight && slots.failures < this.opts.failureThreshold) {
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
        this.intake.attemptFinished(slots, this.monotonic());
        this.intake.queueShrank(this.queued);
        // Forgotten once idle with nothing more due; until then the next top-up asks for it.
        if (slots.running === 0 && slots.queue.length === 0 && slots.drained) this.endpoints.delete(endpointId);
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
    if (slots.queue.length && slots.running < this.opts.perEndpoint && this.running >= this.opts.maxInFlight) this.blocked.add(endpointId);
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
    const generation = this.lease.generation;
    const finished = await tracedAttempt(job, () => attemptDelivery(job, (j) => this.secretOf(j), this.attemptDeps, this.cut.signal));
    // Cut short: nothing is recorded, the delivery is handed back and sent again. By shutdown,
    // stop() hands it back; by a lease not renewed in time, it goes back now, or, if the lease
    // ran out meanwhile (a new name), the instance that took the old name's deliveries has it.
    if (finished === 'aborted') {
      if (!this.stopped) {
        this.forget(job);
        if (generation === this.lease.generation) this.handBack([job.id]);
      }
      return;
    }
    // The POST was made (its record may not be, below).
    this.measured.attempted(finished);
    // Made under a name given up meanwhile (its lease was taken over): its record would change
    // nothing the new holder has, or, if this instance holds the delivery again, be a second row.
    if (generation !== this.lease.generation) {
      this.forget(job);
      return;
    }
    slots.failures = failuresAfter(slots.failures, [finished.ok]);
    this.recorder.add(finished);
  }

  /**
   * Records a batch, then follows what the record says of its endpoints: disabled (now, or
   * by a user through another instance) or deleted, their deliveries queued here are
   * dropped; a new URL is where the queued ones go; the failure count is the database's.
   */
  private async record(batch: FinishedAttempt[]): Promise<void> {
    const startedAt = this.monotonic();
    const queuedBefore = this.enqueued;
    const t0 = performance.now();
    const endpoints = await this.repo.record(this.owner, batch, { threshold: this.opts.failureThreshold, reason: AUTO_DISABLE_REASON, now: this.clock.now() });
    this.stats.flushes++;
    this.stats.flushMs += performance.now() - t0;
    this.stats.recorded += batch.length;
    for (const e of endpoints) if (e.disabledNow) this.log.warn({ endpoint_id: e.id, threshold: this.opts.failureThreshold }, 'endpoint disabled after consecutive failures');
    const ids = [...new Set(batch.map((a) => a.job.endpoint_id))];
    const reread = (again: string[]) =>
      this.repo.endpointStates(again).catch((err: unknown) => {
        this.log.warn({ err }, 'could not read changed endpoints again');
        throw err;
      });
    const follows = await this.changes.afterRecord(ids, endpoints, startedAt, reread, () => this.unrecordedOutcomes());
    // A deleted endpoint's deliveries all go, whenever they were queued.
    for (const { id, now } of follows) this.follow(id, now, now ? queuedBefore : Infinity);
  }

  /** The outcomes (true: delivered) of the attempts finished here and not yet recorded, per endpoint, in the order they finished. */
  private unrecordedOutcomes(): Map<string, boolean[]> {
    const outcomes = new Map<string, boolean[]>();
    for (const a of this.recorder.waiting) {
      const list = outcomes.get(a.job.endpoint_id);
      if (list) list.push(a.ok);
      else outcomes.set(a.job.endpoint_id, [a.ok]);
    }
    return outcomes;
  }

  /**
   * An endpoint was changed through this instance (committed): its deliveries queued here
   * follow at once, and so do those a claim or fan-out that read it before the change
   * hands over after it (see enqueue), until a record reads it again.
   */
  endpointChanged(endpointId: string, now: EndpointNow): void {
    this.changes.madeHere(endpointId, now);
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
    this.intake.queueShrank(this.queued);
    // If this fails they stay leased here; handed back when this instance stops or dies, a claim finds their endpoint disabled or gone and drops them.
    if (dropped.length) this.repo.discard(this.owner, dropped.map((j) => j.id)).catch((err: unknown) => this.log.warn({ err, endpoint_id: endpointId }, 'could not drop the deliveries of a disabled or deleted endpoint'));
    // Queued after the record read the endpoint: whether they were read before or after it
    // changed is not known here, so they go back to the database, where a claim drops them
    // if the endpoint is still disabled and takes them if not.
    if (later.length) this.handBack(later.map((j) => j.id));
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
    if (this.stopped || this.running === 0) return;
    this.log.warn({ in_flight: this.running }, 'lease not renewed in time: attempts in flight cut short and handed back, to be sent again');
    this.cutAttempts();
  }

  private cutAttempts(): void {
    const cut = this.cut;
    this.cut = new AbortController();
    cut.abort();
  }

  /** Renewed after the lease had lapsed: what waited starts. */
  private resumed(): void {
    if (this.stopped) return;
    this.log.info('lease renewed again: delivering');
    for (const id of [...this.endpoints.keys()]) this.pump(id);
    this.wake();
  }

  /**
   * What is done under each renewal: hand back what a release failed to, take over the
   * deliveries of instances whose lease ran out, and now and then hand back orphans.
   */
  private async upkeep(now: Date): Promise<void> {
    this.changes.forgetOld();
    await this.handBacks.retry();
    const reaped = await this.repo.reapExpired(this.owner, now);
    if (reaped) {
      this.log.info({ deliveries: reaped }, 'took over deliveries of a worker whose lease ran out');
      this.wake();
    }
    await this.handBacks.checkOrphans(now);
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

  /**
   * The lease ran out and its deliveries were taken over (renewals failed for a whole lease:
   * the database was unreachable, or the process stalled): what runs under the old name
   * stops, and what it has not started is dropped here without touching the database.
   */
  private leaseLost(old: string, owner: string): void {
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
    this.handBacks.clear();
    // Finished under the old name, not yet recorded: not recorded at all (see attempt()).
    for (const a of this.recorder.dropAll()) this.forget(a.job);
    this.intake.release();
    this.log.warn({ old_owner: old, owner, dropped }, "this instance's lease ran out and its deliveries were taken over: unstarted ones dropped here, going on under a new name");
  }

  /**
   * Stops claiming, lets attempts in flight finish (up to the grace period, then cuts them
   * short), records what finished, and hands every delivery not recorded back as due.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    // The lease is renewed until the end: past it, another instance would take over attempts still finishing here.
    for (const t of this.timers) clearInterval(t);
    this.intake.release();
    await this.claimer.current;
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
    await this.recorder.drain();
    const leftover = [...this.claimed.keys(), ...this.handBacks.pending()];
    await this.lease.stop();
    try {
      await this.repo.release(this.owner, leftover);
      // Nothing is leased to this instance any more.
      await this.repo.retire(this.owner);
    } catch (err) {
      this.log.warn({ err }, 'could not hand deliveries back; their lease will run out');
    }
    this.claimed.clear();
    this.endpoints.clear();
    this.queued = 0;
  }
}
