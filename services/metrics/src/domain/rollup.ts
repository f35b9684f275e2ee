/**
 * What each public event adds to the hourly rollups: one counter of its organization,
 * environment, inbox and hour (the hour of the envelope's `timestamp`, UTC), and for a
 * delivery its latency's histogram bucket. Events of one batch add up into one row per
 * hour and key before they are written (see aggregate). Each event adds to three rows of its
 * hour, told apart by the key column (`inbox_id`): its inbox's (`inb_...`), the row of all the
 * environment's inboxes (ALL_INBOXES), and, when the inbox is on a custom domain, the row of
 * all the inboxes on that domain (the domain's id, `dom_...`; ids are prefixed, so the three
 * never meet). A read of the whole environment or of one domain takes one row per hour
 * however many inboxes it has. `domain.verified` counts nothing (no inbox).
 */
import type { EventEnvelope } from '@mailroom/contracts';
import { latencyBucket } from './histogram';

/** The inbox_id of an environment's row of all its inboxes (no id has a `*`). */
export const ALL_INBOXES = '*';

export const COUNTERS = [
  'received',
  'sent',
  'delivered',
  'bounced_hard',
  'bounced_soft',
  'complained',
  'rejected_blocked_recipient',
  'rejected_rate_limited',
  'rejected_account_paused',
] as const;
export type Counter = (typeof COUNTERS)[number];
export type Counters = Record<Counter, number>;

export interface RollupKey {
  org_id: string;
  env_id: string;
  inbox_id: string;
  /** Start of the hour, UTC. */
  hour: Date;
}

/** One event's contribution. */
export interface Increment {
  key: RollupKey;
  counter: Counter;
  /** For a delivery: the latency's bucket and the latency itself. */
  latency?: { bucket: number; ms: number };
}

/** Adds of one batch to one row: counters, the sum of latencies, and the latency buckets hit. */
export interface RollupRow extends RollupKey, Counters {
  latency_sum_ms: number;
  /** Bucket -> deliveries. */
  latency: Map<number, number>;
}

const HOUR_MS = 3_600_000;

/** The custom domain (its id) of an event's inbox, or null for none (MAIL_DOMAIN, or not known). */
export type DomainOf = (event: { org_id: string; env_id: string; inbox_id: string }) => string | null;

export function hourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

export function zeroCounters(): Counters {
  return Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;
}

function counterOf(event: EventEnvelope): Counter | null {
  switch (event.type) {
    case 'message.received':
      return 'received';
    case 'message.sent':
      return 'sent';
    case 'message.delivered':
      return 'delivered';
    case 'message.bounced':
      return event.data.bounce_type === 'Permanent' ? 'bounced_hard' : 'bounced_soft';
    case 'message.complained':
      return 'complained';
    case 'message.rejected':
      return `rejected_${event.data.rejection_reason}`;
    case 'domain.verified':
      return null;
  }
}

/** What the event adds, or null for one that counts nothing. */
export function incrementOf(event: EventEnvelope): Increment | null {
  const counter = counterOf(event);
  if (counter === null || event.type === 'domain.verified') return null;
  const key = { org_id: event.org_id, env_id: event.env_id, inbox_id: event.data.inbox_id, hour: hourOf(new Date(event.timestamp)) };
  if (event.type === 'message.delivered') {
    const ms = event.data.processing_time_ms;
    return { key, counter, latency: { bucket: latencyBucket(ms), ms } };
  }
  return { key, counter };
}

function keyString(k: RollupKey): string {
  return `${k.org_id}\u0000${k.env_id}\u0000${k.hour.getTime()}\u0000${k.inbox_id}`;
}

/** The rows an increment adds to: its inbox's, the environment's, and its domain's when it has one. */
export function keysOf(key: RollupKey, domainId: string | null): RollupKey[] {
  const keys = [key, { ...key, inbox_id: ALL_INBOXES }];
  if (domainId !== null) keys.push({ ...key, inbox_id: domainId });
  return keys;
}

/**
 * The events' increments added up per row, in key order (org, env, hour, key): writers
 * that take row locks in one order do not deadlock each other.
 */
export function aggregate(events: readonly EventEnvelope[], domainOf: DomainOf): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const event of events) {
    const inc = incrementOf(event);
    if (!inc) continue;
    for (const key of keysOf(inc.key, domainOf(inc.key))) {
      const id = keyString(key);
      let row = rows.get(id);
      if (!row) {
        row = { ...key, ...zeroCounters(), latency_sum_ms: 0, latency: new Map() };
        rows.set(id, row);
      }
      row[inc.counter] += 1;
      if (inc.latency) {
        row.latency_sum_ms += inc.latency.ms;
        row.latency.set(inc.latency.bucket, (row.latency.get(inc.latency.bucket) ?? 0) + 1);
      }
    }
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}
