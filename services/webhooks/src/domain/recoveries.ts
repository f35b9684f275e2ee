/**
 * Runs recoveries in the background. A recovery reads its window back from the event
 * stream (every tenant's events: a 14-day window can be millions of messages) and queues
 * each event of its endpoint's tenant and types that has no successful delivery to the
 * endpoint. Its progress (the next stream sequence, the count queued) is saved with each
 * chunk of queued deliveries, in one transaction, under a lease: if the instance stops or
 * dies, another takes the recovery up where it was, and no event is queued twice (the
 * queueing skips events already queued or delivered in any case).
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { DeliveryRepository, StoredEvent } from '../repo/delivery.repository';
import type { EndpointRepository } from '../repo/endpoint.repository';
import type { RecoveryRepository, RecoveryRow } from '../repo/recovery.repository';
import { storedEvent } from './endpoints';
import { inboxOf, subscribes } from './subscription';
import type { EventHistory, Transact, WakeDispatcher } from './ports';

/** How long a recovery stays with the instance working on it without a word from it. */
export const RECOVERY_LEASE_MS = 60_000;
/** Progress is saved (and the lease renewed) at least this often, even while no event of the endpoint's comes by. */
const PROGRESS_EVERY_MS = 5_000;
/** A read that gets no message for this long (the stream unreachable) ends as a failed run, retried later. */
const STALL_MS = 5 * 60_000;
/** Events queued per transaction at most. */
const CHUNK = 500;
/** Recoveries one instance runs at once: each is a read of the stream, in the background of deliveries. */
export const RECOVERIES_PER_INSTANCE = 2;
/** Failed runs in a row after which a recovery is given up (failed, with the reason). */
const MAX_FAILURES = 5;
/** After a failed run, the recovery is taken again this much later (doubling with each failure in a row). */
const RETRY_AFTER_MS = 10_000;
/**
 * The stream is read this much before `since` and after `until` in publication time: an
 * envelope's timestamp (which decides whether the event is in the window) can precede its
 * publication, by a producer's outbox relay for instance.
 */
export const HISTORY_MARGIN_MS = 5 * 60_000;

/** A recovery no longer this instance's (deleted with its endpoint, or its lease taken over). */
class Lost extends Error {}
/** The endpoint was disabled while recovering: the rest would be dropped at claim, so the recovery ends. */
export interface RecoveryRunnerDeps {
  transact: Transact;
  recoveries: RecoveryRepository;
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  history: EventHistory;
  clock: Clock;
  log: Logger;
  wake: WakeDispatcher;
  /** This instance's name for leases. */
  owner: string;
  maxAttempts: number;
  pollIntervalMs: number;
  /** Monotonic milliseconds (tests); performance.now() by default. */
  monotonic?: () => number;
  /** How often a run renews its lease and looks for a stall (tests); every 5 s by default. */
  renewEveryMs?: number;
}

export class RecoveryRunner {
  private readonly runs = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private taking: Promise<void> | undefined;
  private takeAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly monotonic: () => number;

  constructor(private readonly d: RecoveryRunnerDeps) {
    this.monotonic = d.monotonic ?? (() => performance.now());
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.d.pollIntervalMs).unref();
    this.kick();
  }

  /** Looks for recoveries to run now (a new one, a freed place); coalesced. */
  kick(): void {
    if (this.stopped) return;
    if (this.taking) {
      this.takeAgain = true;
      return;
    }
    this.taking = this.takeAll().finally(() => (this.taking = undefined));
  }

  private async takeAll(): Promise<void> {
    do {
      this.takeAgain = false;
      while (!this.stopped && this.runs.size < RECOVERIES_PER_INSTANCE) {
        let row: RecoveryRow | undefined;
        try {
          const now = this.d.clock.now();
          row = await this.d.recoveries.take(this.d.owner, now, new Date(now.getTime() + RECOVERY_LEASE_MS), [...this.runs.keys()]);
        } catch (err) {
          this.d.log.warn({ err }, 'could not look for recoveries to run; trying again at the next poll');
          return;
        }
        if (!row) break;
        const abort = new AbortController();
        const id = row.id;
        const done = this.run(row, abort.signal).finally(() => {
          this.runs.delete(id);
          this.kick();
        });
        this.runs.set(id, { abort, done });
      }
    } while (this.takeAgain && !this.stopped);
  }

  private async run(r: RecoveryRow, stopping: AbortSignal): Promise<void> {
    const log = this.d.log.child({ recovery_id: r.id, endpoint_id: r.endpoint_id });
    const { owner } = this.d;
    // Ends the read when the service stops, or when the lease is found lost.
    const ended = new AbortController();
    const signal = ended.signal;
    const onStop = () => ended.abort();
    stopping.addEventListener('abort', onStop, { once: true });
    // The lease is renewed on its own schedule too (one renewal at a time): a read that waits
    // (the stream slow to answer) calls nothing for a while, and must not lose it meanwhile;
    // lost, the run ends. A read that gets nothing for STALL_MS ends as a failed run.
    let lost = false;
    let stalled = false;
    let renewing = false;
    let lastRead = this.monotonic();
    const renewal = setInterval(() => {
      if (this.monotonic() - lastRead > STALL_MS) {
        stalled = true;
        ended.abort();
        return;
      }
      if (renewing) return;
      renewing = true;
      const until = new Date(this.d.clock.now().getTime() + RECOVERY_LEASE_MS);
      this.d.recoveries
        .renew(r.id, owner, until)
        .then(
          (ours) => {
            if (ours) return;
            lost = true;
            ended.abort();
          },
          (err: unknown) => log.warn({ err }, 'could not renew the lease of a recovery; trying again'),
        )
        .finally(() => (renewing = false));
    }, this.d.renewEveryMs ?? PROGRESS_EVERY_MS);
    try {
      const endpoint = await this.d.endpoints.byId(r.endpoint_id);
      // Deleted: its recoveries went with it.
      if (!endpoint) return;
      const since = r.since.getTime();
      const until = r.until.getTime();
      let chunk: StoredEvent[] = [];
      let lastSeq: number | undefined;
      let savedAt = this.monotonic();
      let queuedHere = 0;
      const save = async () => {
        if (lastSeq === undefined) return;
        const batch = chunk;
        const nextSeq = lastSeq + 1;
        chunk = [];
        savedAt = this.monotonic();
        const disabled = await this.d.transact(async (trx) => {
          const now = this.d.clock.now();
          const current = await this.d.endpoints.byId(r.endpoint_id, trx);
          if (!current) throw new Lost();
          if (current.disabled) return true;
          const queued = await this.d.deliveries.queueRecovery(r.endpoint_id, batch, this.d.maxAttempts, now, trx);
          if (!(await this.d.recoveries.progress(r.id, owner, { queued, nextSeq, leaseUntil: new Date(now.getTime() + RECOVERY_LEASE_MS), now }, trx))) throw new Lost();
          queuedHere += queued;
          return false;
        });
        if (disabled) throw new EndpointDisabled();
        if (queuedHere) this.d.wake(r.endpoint_id);
      };
      const from = r.next_seq !== null ? { seq: r.next_seq } : { time: new Date(since - HISTORY_MARGIN_MS) };
      await this.d.history.read(
        from,
        new Date(until + HISTORY_MARGIN_MS),
        async (event, seq, traceparent) => {
          lastSeq = seq;
          lastRead = this.monotonic();
          if (event && subscribes(endpoint, { ...event, inbox_id: inboxOf(event) })) {
            const at = Date.parse(event.timestamp);
            // Its attempts in the trace it was published in (the mail's).
            if (at >= since && at < until) chunk.push(storedEvent(event, traceparent));
          }
          if (chunk.length >= CHUNK || this.monotonic() - savedAt >= PROGRESS_EVERY_MS) await save();
        },
        signal,
      );
      // No longer ours: whoever has it now goes on from its last save.
      if (lost) {
        log.info('recovery no longer ours (its lease was taken over, or it was deleted with its endpoint)');
        return;
      }
      if (stalled) throw new Error(`the event stream sent nothing for ${STALL_MS / 60_000} minutes`);
      // Stopped (shutdown: the lease is given up in stop()): it resumes from its last save.
      if (signal.aborted) return;
      await save();
      await this.d.recoveries.finish(r.id, owner, { status: 'finished', now: this.d.clock.now() });
      log.info({ queued_by_this_run: queuedHere }, 'recovery finished');
    } catch (err) {
      if (err instanceof Lost) {
        log.info('recovery no longer ours (its endpoint was deleted, or another instance took it over)');
        return;
      }
      if (err instanceof EndpointDisabled) {
        await this.d.recoveries.finish(r.id, owner, { status: 'failed', error: 'the endpoint was disabled during the recovery', now: this.d.clock.now() }).catch((e: unknown) => log.warn({ err: e }, 'could not record the end of a recovery'));
        return;
      }
      if (lost || (signal.aborted && !stalled)) return;
      const now = this.d.clock.now();
      const retryAt = new Date(now.getTime() + RETRY_AFTER_MS * 2 ** Math.min(r.failures, 6));
      try {
        const outcome = await this.d.recoveries.failedRun(r.id, owner, { error: 'the event stream or the database could not be read', maxFailures: MAX_FAILURES, retryAt, now });
        log.warn({ err, outcome }, outcome === 'failed' ? 'recovery failed for good' : 'recovery run failed; it will be taken up again');
      } catch (e) {
        log.warn({ err, record_err: e }, 'recovery run failed, and so did recording it; its lease will run out');
      }
    } finally {
      clearInterval(renewal);
      stopping.removeEventListener('abort', onStop);
    }
  }

  /** Stops the runs (each resumes later from its last save) and gives their leases up. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.taking;
    for (const run of this.runs.values()) run.abort.abort();
    await Promise.allSettled([...this.runs.values()].map((r) => r.done));
    await this.d.recoveries.release(this.d.owner).catch((err: unknown) => this.d.log.warn({ err }, 'could not give recovery leases up; they will run out'));
  }
}

class EndpointDisabled extends Error {}
