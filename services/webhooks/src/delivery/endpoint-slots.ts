/** What the dispatcher keeps per endpoint on this instance: its queue in creation order, its slots and what it measured. */
import type { ClaimedJob } from '../repo/delivery.repository';

/** Inserts a delivery into a queue kept in id (creation) order; new work, the usual case, goes last at once. */
export function insertById(queue: ClaimedJob[], job: ClaimedJob): void {
  if (queue.length === 0 || queue[queue.length - 1]!.id < job.id) {
    queue.push(job);
    return;
  }
  let lo = 0;
  let hi = queue.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (queue[mid]!.id < job.id) lo = mid + 1;
    else hi = mid;
  }
  queue.splice(lo, 0, job);
}

export interface EndpointSlots {
  running: number;
  queue: ClaimedJob[];
  /** The last claim for this endpoint found fewer due deliveries than it asked for. */
  drained: boolean;
  /**
   * Deliveries in `queue` that came from a claim. Claims top an endpoint up by these alone,
   * so deliveries waiting in the database are claimed even while new work handed over by the
   * fan-out keeps the endpoint busy, and they start before newer ones (the queue is in
   * creation order): none waits behind a stream of newer work.
   */
  fromClaims: number;
  /** Start times (monotonic ms) of the attempts running. */
  starts: number[];
  /**
   * Time per finished attempt while the endpoint had work waiting (all its slots busy), ms,
   * averaged: the interval between two attempts finishing, the first with its queue not
   * empty; the endpoint's throughput, that is. A pause of this process (a fan-out's rows
   * parsed, a GC) counts once in it, where it would count in the duration of every attempt
   * running through it: measured by duration, busy moments made fast endpoints look slow,
   * and their new deliveries went the long way (pending, then claimed back).
   * Undefined until measured.
   */
  msPerAttempt: number | undefined;
  /** When an attempt last finished with work waiting (monotonic ms), if the one after it has not yet. */
  busySince: number | undefined;
  /**
   * The endpoint's consecutive failed attempts as this instance knows them: its count at the
   * last record of its attempts here, plus the attempts that failed here since (0 after a
   * success). At the threshold no attempt starts until a record says whether the endpoint is
   * disabled: a fast-failing receiver gets the threshold's failed attempts (and those already
   * running), not the whole queue while the last of them is being recorded.
   */
  failures: number;
  /** The endpoint's URL as last known here; `mixedUrls`: some queued delivery carries another. */
  url: string;
  mixedUrls: boolean;
}
