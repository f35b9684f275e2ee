/**
 * Database pool usage, per service's pool (the semantic conventions' db.client.connection.*):
 * connections by state (idle, used), the pool's bound, and requests waiting for a connection.
 * Read from the pools' own counters at each collection (three numbers per pool: nothing to
 * sample ahead of a scrape).
 */
import { SERVICE_ATTRIBUTE, meterOf, metricsOn } from '@mailroom/platform';
import type { createPool } from '@mailroom/db';

type Pool = ReturnType<typeof createPool>;

interface Watched {
  used: Record<string, string>;
  idle: Record<string, string>;
  pool: Record<string, string>;
}

const pools = new Map<Pool, Watched>();
let observing = false;

/** Reports `pool` (the pool of `service`'s schema `schema`) until the returned function is called. */
export function observePool(pool: Pool, service: string, schema: string): () => void {
  if (!metricsOn()) return () => {};
  if (!observing) {
    observing = true;
    const meter = meterOf();
    const count = meter.createObservableUpDownCounter('db.client.connection.count', { description: 'Connections of the pool by state (idle, used)', unit: '{connection}' });
    const max = meter.createObservableUpDownCounter('db.client.connection.max', { description: 'The most connections the pool opens', unit: '{connection}' });
    const pending = meter.createObservableUpDownCounter('db.client.connection.pending_requests', { description: 'Requests waiting for a connection of the pool', unit: '{request}' });
    meter.addBatchObservableCallback(
      (result) => {
        for (const [p, attrs] of pools) {
          result.observe(count, p.totalCount - p.idleCount, attrs.used);
          result.observe(count, p.idleCount, attrs.idle);
          result.observe(max, p.options.max ?? 10, attrs.pool);
          result.observe(pending, p.waitingCount, attrs.pool);
        }
      },
      [count, max, pending],
    );
  }
  const base = { 'db.client.connection.pool.name': schema, [SERVICE_ATTRIBUTE]: service };
  pools.set(pool, { pool: base, used: { ...base, 'db.client.connection.state': 'used' }, idle: { ...base, 'db.client.connection.state': 'idle' } });
  return () => void pools.delete(pool);
}
