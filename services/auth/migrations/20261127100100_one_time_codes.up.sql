-- What a verification or password reset mail carries: a 6-digit code (HMAC-SHA256 under a key
-- derived from SECRETS_ENCRYPTION_KEY, over the row id and the code: a stolen table alone does
-- not give the codes away) and a link token (32 random bytes: SHA-256). The rules (expiry,
-- attempts, single use, how often a new one may be sent) are the domain's
-- (services/auth/src/domain/one-time-codes.ts).
create table one_time_codes (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('email_verification', 'password_reset')),
  -- The address it was sent to: a verification proves this address, no later one.
  email text not null,
  code_hash bytea not null,
  token_hash bytea not null unique,
  attempts integer not null default 0,
  created_at timestamptz not null,
  code_expires_at timestamptz not null,
  token_expires_at timestamptz not null,
  -- Used, or replaced by a newer one: it works no more.
  closed_at timestamptz,
  closed_reason text check (closed_reason in ('used', 'replaced'))
);
-- One open code per person and purpose: a new one replaces the old in the same transaction.
create unique index one_time_codes_open on one_time_codes (user_id, purpose) where closed_at is null;
-- How many were sent lately (the resend throttle).
create index one_time_codes_recent on one_time_codes (user_id, purpose, created_at);
