/**
 * What an instance knows of how its endpoints changed, and which view of each its queued
 * deliveries follow. Changes reach it two ways:
 * - made through this instance (a PATCH or DELETE it served): applied at once and kept for
 *   a while, so a claim or fan-out that read the endpoint before the change and hands its
 *   deliveries over after it follows the change too;
 * - read by each record (disabled at the threshold, or by a user through another instance,
 *   deleted, a new URL, the failure count).
 * When both happened while a record ran, which came last is not known from here: those
 * endpoints are read again.
 */
import type { EndpointNow } from '../domain/ports';
import { failuresAfter } from '../domain/endpoint-health';
import type { RecordedEndpoint } from '../repo/delivery.repository';

/** How long a change made through this instance is applied to deliveries read before it (longer than any claim or fan-out). */
export const CHANGE_MEMORY_MS = 60_000;

/** An endpoint's deliveries queued here follow `now` (undefined: the endpoint is gone). */
export interface Follow {
  id: string;
  now: EndpointNow;
}

export class EndpointChanges {
  /** Endpoints changed through this instance: when (monotonic ms) and how they are now. */
  private readonly changes = new Map<string, { at: number; now: EndpointNow }>();

  constructor(private readonly monotonic: () => number) {}

  /** An endpoint was changed through this instance (committed). */
  madeHere(id: string, now: EndpointNow): void {
    this.changes.set(id, { at: this.monotonic(), now });
  }

  /** The change a delivery read at `readAt` (a claim's or fan-out's start) must follow, if one was made here since. */
  since(id: string, readAt: number): { now: EndpointNow } | undefined {
    if (this.changes.size === 0) return undefined;
    const change = this.changes.get(id);
    return change && readAt <= change.at ? change : undefined;
  }

  /**
   * What a record that started at `readAt` read of its batch's endpoints (`read`: a deleted
   * one is missing), turned into what their queued deliveries follow. Endpoints changed here
   * while it ran are read again (`reread`; if that fails, the first read stands);
   * `unrecorded()` gives the outcomes finished here and not yet recorded, which the count
   * goes on from.
   */
  async afterRecord(
    ids: string[],
    read: RecordedEndpoint[],
    readAt: number,
    reread: (ids: string[]) => Promise<RecordedEndpoint[]>,
    unrecorded: () => Map<string, boolean[]>,
  ): Promise<Follow[]> {
    const byId = new Map(read.map((e) => [e.id, e]));
    let reads = ids.map((id) => ({ id, e: byId.get(id), readAt }));
    const again = reads.filter((r) => this.changedAfter(r.id, r.readAt)).map((r) => r.id);
    if (again.length) {
      const rereadAt = this.monotonic();
      const fresh = await reread(again).then(
        (rows) => new Map(rows.map((e) => [e.id, e])),
        () => undefined,
      );
      if (fresh) reads = reads.map((r) => (again.includes(r.id) ? { id: r.id, e: fresh.get(r.id), readAt: rereadAt } : r));
    }
    const outcomes = unrecorded();
    const follows: Follow[] = [];
    for (const { id, e, readAt: at } of reads) {
      // A change made here after the read started stands (it was applied when made).
      if (this.changedAfter(id, at)) continue;
      if (!e) {
        // Deleted: nothing of it is worth keeping, whenever it was read.
        this.madeHere(id, undefined);
        follows.push({ id, now: undefined });
        continue;
      }
      const view = { url: e.url, disabled: e.disabled, consecutiveFailures: failuresAfter(e.consecutiveFailures, outcomes.get(id) ?? []) };
      const entry = this.changes.get(id);
      // Found disabled: deliveries read before now may have been read before the disable; they go back as they arrive.
      if (e.disabled) this.changes.set(id, { at: this.monotonic(), now: view });
      // The latest view, for deliveries read before a change made here.
      else if (entry) entry.now = view;
      follows.push({ id, now: view });
    }
    return follows;
  }

  /** Forgets changes older than CHANGE_MEMORY_MS: every read since has seen them. */
  forgetOld(): void {
    const before = this.monotonic() - CHANGE_MEMORY_MS;
    for (const [id, c] of this.changes) if (c.at < before) this.changes.delete(id);
  }

  private changedAfter(id: string, readAt: number): boolean {
    return (this.changes.get(id)?.at ?? -Infinity) >= readAt;
  }
}
