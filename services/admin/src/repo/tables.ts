import type { ColumnType, Generated, Transaction } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date, Date>;

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

export interface AdminDb {
  admin_keys: AdminKeyTable;
  audit_log: AuditLogTable;
  exports: ExportTable;
}

export type AdminTx = Transaction<AdminDb>;
