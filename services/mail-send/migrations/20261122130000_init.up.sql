-- One row per outbound message: its state only moves forward (see domain/status.ts).
create table sends (
  message_id text primary key,
  org_id text not null,
  env_id text not null,
  inbox_id text not null,
  thread_id text not null,
  from_address text not null,
  to_addresses text[] not null,
  subject text not null,
  status text not null check (status in ('queued', 'sending', 'sent', 'delivered', 'bounced', 'complained', 'failed')),
  provider text,
  provider_message_id text,
  attempts integer not null default 0,
  last_error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  delivered_at timestamptz,
  bounced_at timestamptz,
  complained_at timestamptz,
  updated_at timestamptz not null default now()
);

-- Sends allowed by the pre-send check, for the per-inbox and per-organization rates.
create table send_log (
  org_id text not null,
  inbox_id text not null,
  at timestamptz not null default now()
);
create index send_log_by_inbox on send_log (inbox_id, at);
create index send_log_by_org on send_log (org_id, at);

create table suppressions (
  org_id text not null,
  env_id text not null,
  address text not null,
  reason text not null check (reason in ('hard_bounce', 'complaint', 'manual')),
  message_id text,
  created_at timestamptz not null default now(),
  primary key (org_id, env_id, address)
);

-- Reports already processed: a redelivered report changes nothing.
create table feedback_processed (
  raw_id text primary key,
  message_id text,
  processed_at timestamptz not null default now()
);

create table outbox (
  id text primary key,
  subject text,
  payload text not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_pending on outbox (id) where published_at is null;
