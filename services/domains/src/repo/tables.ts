import type { ColumnType, Generated, Transaction } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date, Date>;
/** jsonb: read as parsed JSON (pg parses it), written as text. */
type Json = ColumnType<unknown, string | undefined, string>;

export interface DomainTable {
  id: string;
  org_id: string;
  env_id: string;
  name: string;
  status: Generated<'pending' | 'verified' | 'failed'>;
  failure_reason: string | null;
  dkim_selector: string;
  dkim_public_key: string;
  dkim_private_key_sealed: Buffer;
  /** A rotation's new key, until its record verifies (all four or none). */
  dkim_next_selector: string | null;
  dkim_next_public_key: string | null;
  dkim_next_private_key_sealed: Buffer | null;
  dkim_next_created_at: Date | null;
  checks: Json;
  catch_all_inbox_id: string | null;
  /** The catch-all inbox's address; set and cleared with catch_all_inbox_id. */
  catch_all_address: string | null;
  created_at: Timestamp;
  verified_at: Date | null;
  verified_event_id: string | null;
  last_checked_at: Date | null;
  next_check_at: Timestamp;
  consecutive_failures: Generated<number>;
  lease_owner: string | null;
  lease_until: Date | null;
}

export interface DeletedEnvironmentTable {
  env_id: string;
  org_id: string;
  deleted_at: Date;
}

export interface OutboxTable {
  id: string;
  subject: string | null;
  payload: string;
  created_at: Generated<Date>;
  published_at: Date | null;
  /** The W3C traceparent of the work that wrote the row (libs/runtime Outbox); null with telemetry off. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DomainsDb {
  domains: DomainTable;
  deleted_environments: DeletedEnvironmentTable;
  outbox: OutboxTable;
}

export type DomainsTx = Transaction<DomainsDb>;
