-- Webhook endpoints of each tenant (org + environment).
create table endpoints (
  id text primary key,
  org_id text not null,
  env_id text not null,
  url text not null,
  -- null: every event type, including types added later.
  event_types text[],
  description text,
  -- AES-256-GCM under SECRETS_ENCRYPTION_KEY, bound to the endpoint id: signing needs the secret itself.
  secret_sealed bytea not null,
  disabled boolean not null default false,
  disabled_reason text,
  disabled_at timestamptz,
  -- Failed attempts since the last 2xx; 50 disables the endpoint.
  consecutive_failures integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index endpoints_by_tenant on endpoints (org_id, env_id, id);

-- Each event that has at least one delivery, serialized once: every attempt sends these bytes.
create table events (
  id text primary key,
  org_id text not null,
  env_id text not null,
  type text not null,
  body bytea not null,
  occurred_at timestamptz not null,
  stored_at timestamptz not null default now()
);

-- One delivery of one event to one endpoint: its state and when it is next due. Attempts
-- are claimed with `for update skip locked` and leased to one worker (lock_owner) until
-- locked_until; a worker renews its leases while alive, so the work of a killed worker
-- is taken over once its lease runs out.
create table jobs (
  id bigint generated always as identity primary key,
  endpoint_id text not null references endpoints (id) on delete cascade,
  event_id text not null references events (id),
  -- event: fan-out of the event stream (once per event and endpoint); manual: redeliver; recover: POST .../recover.
  origin text not null check (origin in ('event', 'manual', 'recover')),
  state text not null check (state in ('pending', 'in_flight', 'delivered', 'failed', 'cancelled')),
  attempts integer not null default 0,
  max_attempts integer not null,
  next_attempt_at timestamptz,
  lock_owner text,
  locked_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index jobs_once_per_event on jobs (event_id, endpoint_id) where origin = 'event';
create index jobs_due on jobs (next_attempt_at) where state = 'pending';
create index jobs_leased on jobs (lock_owner, locked_until) where state = 'in_flight';
create index jobs_by_endpoint on jobs (endpoint_id, event_id);

-- One row per attempt: the delivery records of the API. (job_id, attempt) is unique, so a
-- worker that dies after sending and before recording cannot make a duplicate row.
create table attempts (
  id text primary key,
  -- Insertion order: delivery records page newest first by it.
  seq bigint generated always as identity,
  job_id bigint not null,
  endpoint_id text not null,
  org_id text not null,
  env_id text not null,
  event_id text not null,
  event_type text not null,
  attempt integer not null,
  triggered_by text not null check (triggered_by in ('scheduled', 'manual')),
  status text not null check (status in ('delivered', 'failed')),
  http_status integer not null,
  error text,
  response_body text,
  duration_ms integer not null,
  created_at timestamptz not null,
  next_attempt_at timestamptz,
  unique (job_id, attempt)
);
create index attempts_by_endpoint on attempts (endpoint_id, seq desc);
create index attempts_delivered on attempts (endpoint_id, event_id) where status = 'delivered';
