create table users (
  id text primary key,
  email text not null,
  password_hash text,
  name text,
  email_verified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
-- Emails are stored lower-cased; one live account per address.
create unique index users_email_live on users (email) where deleted_at is null;

create table sessions (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  org_id text not null,
  created_at timestamptz not null default now(),
  last_refreshed_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  ip text,
  user_agent text
);
create index sessions_by_user on sessions (user_id) where revoked_at is null;

-- Rotating refresh tokens: one row per token ever issued, so reuse of a rotated one is detected.
create table refresh_tokens (
  token_hash bytea primary key,
  session_id text not null references sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index refresh_tokens_by_session on refresh_tokens (session_id);

create table signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  -- AES-256-GCM sealed private JWK.
  private_jwk_sealed bytea not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);

create table api_keys (
  id text primary key,
  org_id text not null,
  env_id text not null,
  name text not null,
  key_hash bytea not null unique,
  key_prefix text not null,
  created_by text,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_by_org on api_keys (org_id, id) where revoked_at is null;
