import type { ColumnType, Transaction } from '@mailroom/db';

type Timestamp = ColumnType<Date, Date | undefined, Date>;

export type SendStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'bounced' | 'complained' | 'failed';

export interface SendTable {
  message_id: string;
  org_id: string;
  env_id: string;
  inbox_id: string;
  thread_id: string;
  from_address: string;
  to_addresses: string[];
  subject: string;
  status: SendStatus;
  provider: string | null;
  provider_message_id: string | null;
  /** The W3C traceparent of the hand-over's span (telemetry on), which reports about the send link to. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: Date | null;
  delivered_at: Date | null;
  bounced_at: Date | null;
  complained_at: Date | null;
  updated_at: Timestamp;
}

export interface SendLogTable {
  org_id: string;
  inbox_id: string;
  at: Timestamp;
  /** The send's message (null for sends checked without one, and before the column). */
  message_id: string | null;
}

export interface SuppressionTable {
  org_id: string;
  env_id: string;
  address: string;
  reason: 'hard_bounce' | 'complaint' | 'manual';
  message_id: string | null;
  created_at: Timestamp;
}

export interface FeedbackProcessedTable {
  raw_id: string;
  message_id: string | null;
  processed_at: Timestamp;
}

/** A recipient a report confirmed delivered (message.delivered is announced once per row). */
export interface DeliveredRecipientTable {
  message_id: string;
  address: string;
  delivered_at: Date;
}

/** sending until handed over; then sent, later bounced or complained when a report says so; failed or suppressed when never handed over. */
export type SystemMailStatus = 'sending' | 'sent' | 'failed' | 'suppressed' | 'bounced' | 'complained';

/** Why the platform no longer mails an address: a hard bounce, a complaint, an unsubscribe request. */
export type SystemSuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe';

/** Addresses the platform's own mail no longer goes to (migrations/20261128150000). */
export interface SystemSuppressionTable {
  /** Lower-cased. */
  address: string;
  reason: SystemSuppressionReason;
  system_mail_id: string;
  created_at: Date;
}

export interface SystemMailTable {
  id: string;
  template: string;
  to_address: string;
  status: SystemMailStatus;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface SendDb {
  system_mails: SystemMailTable;
  system_suppressions: SystemSuppressionTable;
  sends: SendTable;
  delivered_recipients: DeliveredRecipientTable;
  send_log: SendLogTable;
  suppressions: SuppressionTable;
  feedback_processed: FeedbackProcessedTable;
}

/** A transaction of this schema: what the domain's Transact port opens and hands to repositories. */
export type SendTx = Transaction<SendDb>;
