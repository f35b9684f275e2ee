-- Environments orgs deleted (internal.orgs.environment.deleted): their endpoints were deleted
-- when the fact was read, in the transaction that wrote the row, and no endpoint is created
-- in them afterwards (libs/runtime deleted-environments.ts).
create table deleted_environments (
  env_id text primary key,
  org_id text not null,
  deleted_at timestamptz not null
);
