-- Metrics rollups (issue 27). Every public event of the EVENTS stream is counted once into
-- the row of its organization, environment, inbox and hour (UTC), and into the row of all
-- the environment's inboxes in that hour (inbox_id '*': a read of the whole environment
-- takes one row per hour, not one per inbox and hour); deliveries add their
-- latency to a histogram of fixed buckets (src/domain/histogram.ts). The ids of the events
-- counted are kept, written in the transaction of the counts, so a redelivered event adds
-- nothing; they are pruned once the stream can no longer deliver them (its max age).
create table hourly_counts (
  org_id text not null,
  env_id text not null,
  hour timestamptz not null,
  inbox_id text not null,
  received bigint not null default 0,
  sent bigint not null default 0,
  delivered bigint not null default 0,
  bounced_hard bigint not null default 0,
  bounced_soft bigint not null default 0,
  complained bigint not null default 0,
  rejected_blocked_recipient bigint not null default 0,
  rejected_rate_limited bigint not null default 0,
  rejected_account_paused bigint not null default 0,
  latency_sum_ms bigint not null default 0,
  primary key (org_id, env_id, hour, inbox_id)
);
-- One inbox's hours, or those of '*' (the inbox_id filter, the whole environment, and whether
-- an inbox has any activity here).
create index hourly_counts_by_inbox on hourly_counts (org_id, env_id, inbox_id, hour);

-- Deliveries by latency bucket, per row of hourly_counts.
create table hourly_latency (
  org_id text not null,
  env_id text not null,
  hour timestamptz not null,
  inbox_id text not null,
  bucket smallint not null check (bucket >= 0),
  deliveries bigint not null default 0,
  primary key (org_id, env_id, hour, inbox_id, bucket)
);

create table processed_events (
  event_id text primary key,
  processed_at timestamptz not null default now()
);
create index processed_events_by_age on processed_events (processed_at);
