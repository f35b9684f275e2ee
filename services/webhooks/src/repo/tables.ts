import type { ColumnType, Generated, Transaction } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date, Date>;

export type JobOrigin = 'event' | 'manual' | 'recover';
/** A job is a delivery still to be attempted; a finished one is deleted (its history is in attempts). */
export type JobState = 'pending' | 'in_flight';

export interface EndpointTable {
  id: string;
  org_id: string;
  env_id: string;
  url: string;
  event_types: string[] | null;
  /** Only these inboxes' events; null: every inbox's, and events of none (domain/subscription.ts). */
  inbox_ids: string[] | null;
  description: string | null;
  secret_sealed: Buffer;
  disabled: Generated<boolean>;
  disabled_reason: string | null;
  disabled_at: Date | null;
  consecutive_failures: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventTable {
  id: string;
  org_id: string;
  env_id: string;
  type: string;
  body: Buffer;
  occurred_at: Timestamp;
  stored_at: Generated<Date>;
  /** False only for an event stored by recovery and not (yet) fanned out from the stream. */
  fanned_out: Generated<boolean>;
  /** The W3C traceparent its delivery attempts are children of (the fan-out's handling, or the publish recovery read); null with telemetry off. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A dispatcher instance's lease: its in-flight jobs are taken over once alive_until has passed. */
export interface WorkerTable {
  owner: string;
  alive_until: Timestamp;
}

export interface JobTable {
  id: Generated<number>;
  endpoint_id: string;
  event_id: string;
  origin: JobOrigin;
  state: JobState;
  attempts: Generated<number>;
  max_attempts: number;
  next_attempt_at: Timestamp;
  /** The worker holding it while in flight (its lease is the worker's row in workers). */
  lock_owner: string | null;
  /** The attempt that scheduled its next one (a retry), whose next_attempt_at a cancellation clears. */
  last_attempt_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One row per attempt; its tenant is its endpoint's, its event type its event's. */
export interface AttemptTable {
  endpoint_id: string;
  /** Sorts by creation time: an endpoint's records list newest first by it. */
  id: string;
  job_id: number;
  event_id: string;
  attempt: number;
  triggered_by: 'scheduled' | 'manual';
  status: 'delivered' | 'failed';
  http_status: number;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
  created_at: Timestamp;
  next_attempt_at: Date | null;
}

/** A recovery of an endpoint's events (see the recoveries migration): the request and its progress. */
export interface RecoveryTable {
  id: string;
  endpoint_id: string;
  since: Timestamp;
  until: Timestamp;
  status: 'running' | 'finished' | 'failed';
  queued: Generated<number>;
  /** The event stream sequence to read from next; null: from the stream time of `since`. */
  next_seq: number | null;
  failures: Generated<number>;
  error: string | null;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Date | null;
}

/** Environments orgs deleted: no endpoint is made in them (libs/runtime deleted-environments.ts). */
export interface DeletedEnvironmentTable {
  env_id: string;
  org_id: string;
  deleted_at: Date;
}

export interface WebhooksDb {
  recoveries: RecoveryTable;
  endpoints: EndpointTable;
  events: EventTable;
  jobs: JobTable;
  attempts: AttemptTable;
  workers: WorkerTable;
  deleted_environments: DeletedEnvironmentTable;
}

/** A transaction of this schema: what the domain's Transact port opens and hands to repositories. */
export type WebhooksTx = Transaction<WebhooksDb>;
