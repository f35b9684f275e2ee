create table organizations (
  id text primary key,
  name text not null,
  plan text not null default 'free',
  -- The user whose signup created this organization: makes that creation idempotent.
  signup_user_id text unique,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table environments (
  id text primary key,
  org_id text not null references organizations (id) on delete cascade,
  name text not null,
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  unique (org_id, name)
);
create unique index environments_one_default on environments (org_id) where is_default;

create table members (
  id text primary key,
  org_id text not null references organizations (id) on delete cascade,
  user_id text not null,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  unique (org_id, user_id)
);
create index members_by_user on members (user_id, created_at);
