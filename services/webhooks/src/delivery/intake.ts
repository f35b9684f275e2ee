/**
 * New work from the fan-out. Deliveries to an endpoint that is flowing (its queue here would
 * be done within FLOW_HORIZON_MS) are created leased to this instance and start without a
 * claim; those to any other endpoint are created pending, to be claimed when it has room.
 * While flowing endpoints have plenty queued, the fan-out waits before its next batch (a
 * second at most), so a burst waits in the event stream rather than being written as
 * pending rows and claimed back.
 */
import type { EndpointSlots } from './endpoint-slots';

/**
 * An endpoint is flowing while the work queued for it here would be done within this time
 * (its queue x its time per finished attempt) and none of its attempts has run longer.
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
/** Weight of the latest interval in an endpoint's time per finished attempt. */
const EWMA_WEIGHT = 0.2;

export class Intake {
  /** The fan-out's wait for room, while there is one. */
  private wait: { room: Promise<void>; low: number; release: () => void } | undefined;
  /** Times the fan-out was held (debug stats). */
  waits = 0;

  constructor(
    /** The dispatcher's endpoints (read only). */
    private readonly endpoints: ReadonlyMap<string, EndpointSlots>,
    private readonly maxInFlight: number,
    private readonly monotonic: () => number,
  ) {}

  /** The endpoints whose new deliveries are created pending (not flowing), up to a bound. */
  pendingFor(): string[] {
    const now = this.monotonic();
    const ids: string[] = [];
    for (const [id, slots] of this.endpoints) {
      // Each new delivery is compared with the list: it stays short. Past it, a slow endpoint's
      // deliveries are leased and wait here, within the dispatcher's bound on claimed deliveries.
      if (ids.length >= MAX_PENDING_FOR) break;
      if (!flowing(slots, now)) ids.push(id);
    }
    return ids;
  }

  /**
   * Undefined while the fan-out may go on; else a promise that resolves when the queued work
   * of flowing endpoints is down to half the mark, or after INTAKE_WAIT_MS (a slow endpoint
   * is not flowing, so it cannot hold intake up for long).
   */
  whenRoom(): Promise<void> | undefined {
    const high = this.maxInFlight * INTAKE_BACKLOG_PER_SLOT;
    if (this.wait || this.flowingBacklog(this.monotonic()) < high) return this.wait?.room;
    this.waits++;
    const until = this.monotonic() + INTAKE_WAIT_MS;
    let release!: () => void;
    const room = new Promise<void>((resolve) => (release = resolve));
    // Checked as queues shrink (queueShrank: all queues together, cheap) and every 5 ms (flowing endpoints only, and the time limit).
    const timer = setInterval(() => {
      const now = this.monotonic();
      if (now >= until || this.flowingBacklog(now) <= high / 2) this.release();
    }, 5);
    this.wait = {
      room,
      low: high / 2,
      release: () => {
        clearInterval(timer);
        this.wait = undefined;
        release();
      },
    };
    return room;
  }

  /** The deliveries queued here (all endpoints) went down to `queued`: the fan-out goes on once it is low. */
  queueShrank(queued: number): void {
    if (this.wait && queued <= this.wait.low) this.wait.release();
  }

  /** Lets the fan-out go on now (stopping, or the lease lost). */
  release(): void {
    this.wait?.release();
  }

  /** An attempt of the endpoint finished at `now`: its time per finished attempt, while it had work waiting. */
  attemptFinished(slots: EndpointSlots, now: number): void {
    if (slots.busySince !== undefined) {
      const took = now - slots.busySince;
      slots.msPerAttempt = slots.msPerAttempt === undefined ? took : slots.msPerAttempt + EWMA_WEIGHT * (took - slots.msPerAttempt);
    }
    slots.busySince = slots.queue.length ? now : undefined;
  }

  private flowingBacklog(now: number): number {
    let n = 0;
    for (const slots of this.endpoints.values()) if (slots.queue.length && flowing(slots, now)) n += slots.queue.length;
    return n;
  }
}

function flowing(slots: EndpointSlots, now: number): boolean {
  if (slots.starts.some((t) => now - t > FLOW_HORIZON_MS)) return false;
  return slots.queue.length * (slots.msPerAttempt ?? 0) <= FLOW_HORIZON_MS;
}
