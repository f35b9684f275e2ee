-- Environments orgs deleted (internal.orgs.environment.deleted): their rollups were deleted
-- when the fact was read, in the transaction that wrote the row, and no event of theirs is
-- counted afterwards (one still in flight, or a replay of the stream): libs/runtime
-- deleted-environments.ts, src/domain/rollups.ts. A replay empties the rollups, not this.
create table deleted_environments (
  env_id text primary key,
  org_id text not null,
  deleted_at timestamptz not null
);
