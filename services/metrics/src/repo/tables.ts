import type { ColumnType, Transaction } from '@mailroom/db';

/** bigint columns (libs/db parses int8 to number). */
type Count = ColumnType<number, number | undefined, number>;

export interface HourlyCountsTable {
  org_id: string;
  env_id: string;
  hour: Date;
  inbox_id: string;
  received: Count;
  sent: Count;
  delivered: Count;
  bounced_hard: Count;
  bounced_soft: Count;
  complained: Count;
  rejected_blocked_recipient: Count;
  rejected_rate_limited: Count;
  rejected_account_paused: Count;
  latency_sum_ms: Count;
}

export interface HourlyLatencyTable {
  org_id: string;
  env_id: string;
  hour: Date;
  inbox_id: string;
  bucket: number;
  deliveries: Count;
}

export interface ProcessedEventsTable {
  event_id: string;
  processed_at: ColumnType<Date, Date | undefined, Date>;
}

/** Environments orgs deleted: their rollups are gone, and their events are not counted. */
export interface DeletedEnvironmentTable {
  env_id: string;
  org_id: string;
  deleted_at: Date;
}

/** The custom domain of each inbox metrics counted events of, learned once (domain/inbox-domains.ts). */
export interface InboxDomainsTable {
  org_id: string;
  env_id: string;
  inbox_id: string;
  domain_id: string | null;
  learned_at: ColumnType<Date, Date | undefined, Date>;
}

export interface MetricsDb {
  hourly_counts: HourlyCountsTable;
  hourly_latency: HourlyLatencyTable;
  processed_events: ProcessedEventsTable;
  deleted_environments: DeletedEnvironmentTable;
  inbox_domains: InboxDomainsTable;
}

export type MetricsTx = Transaction<MetricsDb>;
