-- Who may act in an environment besides the owner and admins (who act in all of them). The
-- default environment is every member's and has no rows here. user_id is kept beside
-- member_id so the gateway's question "may this person act here" is one lookup.
create table environment_members (
  env_id text not null references environments (id) on delete cascade,
  member_id text not null references members (id) on delete cascade,
  org_id text not null references organizations (id) on delete cascade,
  user_id text not null,
  created_at timestamptz not null default now(),
  primary key (env_id, member_id)
);
create index environment_members_by_user on environment_members (org_id, user_id);
