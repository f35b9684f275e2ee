-- Custom domains (issue 25). One row per domain of an environment: its name in A-label form,
-- its DKIM key pair (the private key sealed with SECRETS_ENCRYPTION_KEY, the domain id as
-- associated data, so mail-send can be given it later by a service-only operation), what the
-- last check of each record found (`checks`, by record kind), and the verification job's
-- schedule and lease. Nothing here is a product rule: the states and the schedule are the
-- domain code's (src/domain/verification.ts).
create table domains (
  id text primary key,
  org_id text not null,
  env_id text not null,
  name text not null,
  status text not null default 'pending' check (status in ('pending', 'verified', 'failed')),
  failure_reason text,
  dkim_selector text not null,
  dkim_public_key text not null,
  dkim_private_key_sealed bytea not null,
  checks jsonb not null default '{}',
  -- Where mail to unknown addresses goes (catch-all, a later part of issue 25).
  catch_all_inbox_id text,
  created_at timestamptz not null,
  verified_at timestamptz,
  -- The id of the domain.verified event, once emitted: it is emitted once per domain.
  verified_event_id text,
  last_checked_at timestamptz,
  next_check_at timestamptz not null,
  consecutive_failures integer not null default 0,
  lease_owner text,
  lease_until timestamptz
);
-- A name once per environment.
create unique index domains_name_in_environment on domains (org_id, env_id, name);
-- Tenant lists and counts, newest first.
create index domains_by_tenant on domains (org_id, env_id, id);
-- Who holds a verified name (another organization's creation or verification is refused).
create index domains_verified_by_name on domains (name) where status = 'verified';
-- The verification job's next due domains.
create index domains_due on domains (next_check_at);

-- Environments orgs deleted (internal.orgs.environment.deleted): their domains were deleted
-- when the fact was read, in the transaction that wrote the row, and no domain is created in
-- them afterwards (libs/runtime deleted-environments.ts).
create table deleted_environments (
  env_id text primary key,
  org_id text not null,
  deleted_at timestamptz not null
);

-- Transactional outbox (libs/runtime Outbox): domain.verified and the domains facts are
-- written with the change they announce and relayed after the commit.
create table outbox (
  id text primary key,
  subject text,
  payload text not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_pending on outbox (id) where published_at is null;
