-- Organization exports (issue 28, part 4): one row per export job; the archive is object
-- `id` of the ADMIN_EXPORTS bucket. Whether a job still lives is its heartbeat (the instance
-- running it renews it); the purge job fails one whose heartbeat stopped, and expires
-- finished ones 7 days after they finished (src/domain/exports.ts).
create table exports (
  id text primary key,
  org_id text not null,
  status text not null check (status in ('queued', 'running', 'completed', 'failed', 'expired')),
  -- The admin key that started it.
  created_by text,
  created_at timestamptz not null,
  started_at timestamptz,
  finished_at timestamptz,
  expires_at timestamptz,
  heartbeat_at timestamptz not null,
  size_bytes bigint,
  resources_done integer not null default 0,
  resources_total integer not null,
  current_resource text,
  records bigint not null default 0,
  files bigint not null default 0,
  bytes bigint not null default 0,
  error text
);

-- One export of an organization at a time: a second while one runs is a conflict.
create unique index exports_one_active_per_org on exports (org_id) where status in ('queued', 'running');
create index exports_active_by_heartbeat on exports (heartbeat_at) where status in ('queued', 'running');
create index exports_finished_by_expiry on exports (expires_at) where status in ('completed', 'failed');
