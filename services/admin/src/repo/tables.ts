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
  exports: ExportTable;
}

export type AdminTx = Transaction<AdminDb>;
