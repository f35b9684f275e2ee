/**
 * Counting events into the rollups, exactly once each: in one transaction the batch's event
 * ids are recorded (those already there were counted before: a redelivery, or a second
 * instance that got the same message) and only the new ones are added to their rows. A
 * failed transaction counts none of them, and the messages are redelivered.
 */
import type { EventEnvelope } from '@mailroom/contracts';
import type { RollupStore, Transact } from './ports';
import { aggregate } from './rollup';

export class Rollups {
  constructor(private readonly deps: { transact: Transact; store: RollupStore }) {}

  /** Counts the events not counted before; answers how many were new. */
  async record(events: readonly EventEnvelope[]): Promise<number> {
    if (!events.length) return 0;
    // In id order: two instances recording overlapping batches take the ids' locks in one order.
    const unique = [...new Map(events.map((e) => [e.id, e])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.deps.transact(async (tx) => {
      const fresh = await this.deps.store.markProcessed(
        unique.map((e) => e.id),
        tx,
      );
      if (!fresh.size) return 0;
      const rows = aggregate(unique.filter((e) => fresh.has(e.id)));
      await this.deps.store.addCounts(
        rows.map(({ latency: _latency, ...counts }) => counts),
        tx,
      );
      await this.deps.store.addLatency(
        rows.flatMap((r) => [...r.latency.entries()].sort(([a], [b]) => a - b).map(([bucket, deliveries]) => ({ org_id: r.org_id, env_id: r.env_id, hour: r.hour, inbox_id: r.inbox_id, bucket, deliveries }))),
        tx,
      );
      return fresh.size;
    });
  }
}
