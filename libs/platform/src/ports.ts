/**
 * The ports every service's domain uses, generic in the transaction type. A service's
 * domain/ports.ts names them with its own; the composition root passes the real ones in
 * (libs/db `transactor`, libs/runtime `Outbox`). Domain code sees these, never a database
 * handle or the bus.
 */
import type { EventEnvelope, WORK_ITEMS, WorkSubject } from '@mailroom/contracts';
import type { z } from 'zod';

/**
 * Runs `work` in one database transaction: all of it commits, or none of it. The
 * transaction is opaque to the domain, which only hands it to repositories and the event sink.
 */
export type Transact<Tx> = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/** A row of a service's `outbox` table: subject null for a public event, else the work queue's subject. */
export interface OutboxRow {
  id: string;
  subject: string | null;
  payload: string;
  /** The W3C traceparent of the work that wrote it, which the relay publishes it in; null (or none) with telemetry off. */
  traceparent?: string | null;
}

/**
 * Events and work items that must match a database write: written in the same transaction,
 * published after the commit (the transactional outbox).
 */
export interface EventSink<Tx> {
  /** Writes the event in the caller's transaction; it is published after the commit. */
  add(tx: Tx, event: EventEnvelope): Promise<void>;
  /** Writes a work item in the caller's transaction; `id` is its msgID (one item per id). */
  addWork<S extends WorkSubject>(tx: Tx, subject: S, id: string, item: z.input<(typeof WORK_ITEMS)[S]>): Promise<void>;
  /** The row of an event, validated, for a repository that writes it in a statement of its own. */
  eventRow(event: EventEnvelope): OutboxRow;
  /** The row of a work item, validated; see eventRow. */
  workRow<S extends WorkSubject>(subject: S, id: string, item: z.input<(typeof WORK_ITEMS)[S]>): OutboxRow;
  /** The largest payload (bytes of its JSON) the relay can publish. */
  maxPayloadBytes(): number;
  /** Publishes what was committed now, not at the next interval. */
  kick(): void;
}

/**
 * The environments a service learnt were deleted (libs/runtime `DeletedEnvironments`): its
 * creations refuse them, and the removal of what one held commits with its record.
 */
export interface EnvironmentTombstones<Tx> {
  /** Records the environment as deleted in `tx`, holding off this service's creations until `tx` ends; false when it was recorded before. */
  record(tx: Tx, env: { org_id: string; env_id: string; deleted_at: Date }): Promise<boolean>;
}
