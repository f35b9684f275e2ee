/**
 * `webhooks--dispatch`: the durable consumer of every public event (`events.>`). For each
 * event it stores one pending delivery per subscribed enabled endpoint of the event's org
 * and environment (several events per statement under load), then acks. The deliveries
 * are created leased to this instance's dispatcher when it has room, which starts them
 * after the commit; no message is held across an HTTP call. While the dispatcher has
 * plenty of work it can start soon, the next batch waits (a second at most), so a burst
 * stays in the stream instead of becoming pending rows to claim back. A redelivered
 * message finds its deliveries already there (unique per event and endpoint) and adds
 * nothing.
 */
import { runConsumer, traceparentOf, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { ConsumerName } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { storedEvent } from '../domain/endpoints';
import type { ClaimedJob, DeliveryRepository, NewWorkLease, StoredEvent } from '../repo/delivery.repository';

/** The dispatcher, as the fan-out sees it: new deliveries go straight to it when it has room. */
export interface NewWorkSink {
  /**
   * Resolves when the dispatcher wants more new work (undefined: it does now). While it has
   * plenty it can start soon, the events wait in the stream rather than as pending rows it
   * would have to claim back (bounded: see Dispatcher.whenRoomForNewWork).
   */
  whenRoomForNewWork(): Promise<void> | undefined;
  /** A lease to create new deliveries under, or undefined when this instance has no room for more. */
  leaseForNewWork(): NewWorkLease | undefined;
  /** Takes the deliveries created under `lease` (committed). */
  adopt(jobs: ClaimedJob[], lease: NewWorkLease): void;
  /** Deliveries were created pending (committed): they are to be claimed. */
  createdPending(): void;
}

export const DISPATCH_CONSUMER: ConsumerName = 'webhooks--dispatch';
/** Events written in one statement at most. */
const MAX_BATCH = 500;
/**
 * A write starts this long after the previous one started, at the soonest. Under a steady
 * stream (say 1,000 events/s) a write then takes the few events of these milliseconds
 * instead of the one or two that came during the last write's round trip, which spends
 * a statement and a commit (a WAL flush) on every one or two events. An event that finds
 * no write started within this time is written at once.
 */
export const FAN_OUT_SPACING_MS = 4;

/**
 * Group commit of fan-outs: messages that arrive while a write runs go together in the
 * next one, which starts FAN_OUT_SPACING_MS after the last one started at the soonest, so
 * the cost of a commit is shared by many events under load and a lone event is written at
 * once. Each message is acked only after its own batch committed.
 */
export class FanOutBatcher {
  private pending: { event: StoredEvent; resolve: (created: number) => void; reject: (err: unknown) => void }[] = [];
  /** A write loop is running; it takes every event added before it ends. */
  private writing = false;
  /** When the last write started (monotonic ms). */
  private lastStart = -Infinity;
  private readonly monotonic: () => number;

  constructor(
    private readonly deps: {
      deliveries: DeliveryRepository;
      clock: Clock;
      maxAttempts: number;
      dispatcher: NewWorkSink;
      /** Monotonic milliseconds for the spacing of writes (tests); performance.now() by default. */
      monotonic?: () => number;
    },
  ) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
  }

  add(event: StoredEvent): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push({ event, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        void this.write();
      }
    });
  }

  /**
   * Writes batches until nothing is pending, and clears `writing` in the same turn as it
   * finds nothing more (an event added after that starts a new loop, not one left behind
   * a loop that has ended). Never rejects: each batch settles its own events.
   */
  private async write(): Promise<void> {
    try {
      while (this.pending.length) {
        const room = this.deps.dispatcher.whenRoomForNewWork();
        if (room) await room;
        const since = this.monotonic() - this.lastStart;
        if (since < FAN_OUT_SPACING_MS && this.pending.length < MAX_BATCH) await new Promise((r) => setTimeout(r, FAN_OUT_SPACING_MS - since));
        this.lastStart = this.monotonic();
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          const lease = this.deps.dispatcher.leaseForNewWork();
          const { created, claimed, pendingEndpoints } = await this.deps.deliveries.fanOut(batch.map((b) => b.event), { maxAttempts: this.deps.maxAttempts, now: this.deps.clock.now(), lease });
          if (lease && claimed.length) this.deps.dispatcher.adopt(claimed, lease);
          // Some were created pending: they are claimed when their endpoints have room.
          if (pendingEndpoints.length) this.deps.dispatcher.createdPending();
          for (const b of batch) b.resolve(created);
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

export function runEventsConsumer(
  bus: Bus,
  deps: {
    deliveries: DeliveryRepository;
    clock: Clock;
    maxAttempts: number;
    dispatcher: NewWorkSink;
    concurrency: number;
  },
): Promise<RunningConsumer> {
  const batcher = new FanOutBatcher(deps);
  return runConsumer(bus, {
    subject: 'events.>',
    durable: DISPATCH_CONSUMER,
    filterSubject: 'events.>',
    concurrency: deps.concurrency,
    // A fan-out takes milliseconds: messages an instance took and died with come back after 10 s, not 30.
    ackWaitMs: 10_000,
    handler: async (envelope) => {
      // Its delivery attempts are traced as the children of this message's handling (kept with the event).
      // A failed write throws: the message is redelivered later with backoff.
      await batcher.add(storedEvent(envelope, traceparentOf()));
      return 'ack';
    },
  });
}
