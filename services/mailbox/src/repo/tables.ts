import type { ColumnType, Generated, Transaction } from '@mailroom/db';
import type { AuthResults, SpamResult } from '@mailroom/contracts';

type Timestamp = ColumnType<Date, Date | undefined, Date>;
type Json<T> = ColumnType<T, string, string>;

export interface InboxTable {
  id: string;
  org_id: string;
  env_id: string;
  username: string;
  domain: string;
  address: string;
  display_name: string | null;
  status: 'active' | 'paused';
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Date | null;
}

export interface ThreadTable {
  id: string;
  org_id: string;
  env_id: string;
  inbox_id: string;
  subject: string;
  normalized_subject: string;
  message_count: Generated<number>;
  preview: Generated<string>;
  last_message_at: Date;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MessageTable {
  id: string;
  org_id: string;
  env_id: string;
  inbox_id: string;
  thread_id: string;
  direction: 'inbound' | 'outbound';
  raw_id: string;
  raw_size: number;
  message_id_header: string | null;
  in_reply_to: string | null;
  references: string[];
  from_address: string;
  from_name: string | null;
  reply_to: string[];
  to_addresses: string[];
  cc_addresses: string[];
  subject: string;
  text_body: string;
  html_body: string;
  extracted_text: string | null;
  extracted_html: string | null;
  has_attachments: boolean;
  auth: Json<AuthResults>;
  spam: Json<SpamResult>;
  mail_from: string;
  parse_error: string | null;
  received_at: Date;
  created_at: Timestamp;
}

export interface AttachmentTable {
  id: string;
  message_id: string;
  org_id: string;
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
  disposition: string | null;
  checksum: string;
  position: number;
  object_name: string;
}

export interface MessageLabelTable {
  message_id: string;
  label: string;
  org_id: string;
  env_id: string;
  thread_id: string;
  created_at: Timestamp;
}

/** Environments orgs deleted: no inbox is made in them (libs/runtime deleted-environments.ts). */
export interface DeletedEnvironmentTable {
  env_id: string;
  org_id: string;
  deleted_at: Date;
}

/** Uploads to send: object `id` of MAIL_UPLOADS, referable until expires_at. */
export interface UploadTable {
  id: string;
  org_id: string;
  env_id: string;
  filename: string;
  content_type: string;
  /** bigint: pg answers it as a string; the repository turns it into a number. */
  size: ColumnType<string, number, never>;
  sha256: string;
  created_at: Date;
  expires_at: Date;
}

export interface SendRequestTable {
  org_id: string;
  env_id: string;
  request_key: string;
  message_id: string;
  raw_id: string;
  thread_id: string;
  created_at: Date;
}

export interface MailboxDb {
  inboxes: InboxTable;
  threads: ThreadTable;
  messages: MessageTable;
  attachments: AttachmentTable;
  message_labels: MessageLabelTable;
  deleted_environments: DeletedEnvironmentTable;
  uploads: UploadTable;
  send_requests: SendRequestTable;
}

/** A transaction of this schema: what the domain's Transact port opens and hands to repositories. */
export type MailboxTx = Transaction<MailboxDb>;
