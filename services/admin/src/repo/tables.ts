import type { ColumnType, Executor, Generated, Transaction } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date, Date>;
/** jsonb: read as parsed by pg, written as JSON text. */
type Json = ColumnType<unknown, string, string>;

export interface AdminKeyTable {
  id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** One entry of the audit log (append-only). */
export interface AuditLogTable {
  id: string;
  at: Timestamp;
  action: string;
  actor_type: string;
  actor_id: string | null;
  org_id: string | null;
  target_type: string;
  target_id: string;
  details: ColumnType<Record<string, string | number | boolean | null>, string, never>;
  request_id: string | null;
  ip: string | null;
  source: string;
}

export interface ExportTable {
  id: string;
  org_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'expired';
  created_by: string | null;
  created_at: Timestamp;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date | null;
  heartbeat_at: Timestamp;
  size_bytes: number | null;
  resources_done: Generated<number>;
  resources_total: number;
  current_resource: string | null;
  records: Generated<number>;
  files: Generated<number>;
  bytes: Generated<number>;
  error: string | null;
}

export interface HealthRoundTable {
  slot: Timestamp;
}

export interface HealthSampleTable {
  id: string;
  taken_at: Timestamp;
  status: string;
  previous_status: string | null;
  status_changed: boolean;
  reasons: Json;
  report: Json;
}

export interface AlertTable {
  key: string;
  thresholds: Json;
  condition_met: boolean;
  consecutive: number;
  detail: string | null;
  muted_until: Date | null;
  acknowledged_at: Date | null;
  last_fired_at: Date | null;
  last_resolved_at: Date | null;
  evaluated_at: Date | null;
}

export interface AlertTransitionTable {
  id: string;
  key: string;
  from_state: string;
  to_state: string;
  at: Timestamp;
  reason: string;
}

export interface AdminDb {
  admin_keys: AdminKeyTable;
  audit_log: AuditLogTable;
  exports: ExportTable;
  health_rounds: HealthRoundTable;
  health_samples: HealthSampleTable;
  alerts: AlertTable;
  alert_transitions: AlertTransitionTable;
}

export type AdminTx = Transaction<AdminDb>;
/** A transaction, or the database itself (one statement). */
export type AdminExecutor = Executor<AdminDb>;
