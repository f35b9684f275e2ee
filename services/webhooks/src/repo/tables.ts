import type { ColumnType, Generated } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date, Date>;

export type JobOrigin = 'event' | 'manual' | 'recover';
export type JobState = 'pending' | 'in_flight' | 'delivered' | 'failed' | 'cancelled';

export interface EndpointTable {
  id: string;
  org_id: string;
  env_id: string;
  url: string;
  event_types: string[] | null;
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
}

export interface JobTable {
  id: Generated<number>;
  endpoint_id: string;
  event_id: string;
  origin: JobOrigin;
  state: JobState;
  attempts: Generated<number>;
  max_attempts: number;
  next_attempt_at: Date | null;
  lock_owner: string | null;
  locked_until: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AttemptTable {
  seq: Generated<number>;
  id: string;
  job_id: number;
  endpoint_id: string;
  org_id: string;
  env_id: string;
  event_id: string;
  event_type: string;
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

export interface WebhooksDb {
  endpoints: EndpointTable;
  events: EventTable;
  jobs: JobTable;
  attempts: AttemptTable;
}
