import type { ColumnType, Transaction } from '@mailroom/db';

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

export interface AdminDb {
  admin_keys: AdminKeyTable;
}

export type AdminTx = Transaction<AdminDb>;
