-- The second factor of an account (TOTP, RFC 6238) and its recovery codes. The rules (the
-- code window, a time step used once, recovery codes used once, what proves what) are the
-- domain's (services/auth/src/domain/mfa.ts).
create table mfa_totp (
  user_id text primary key references users (id) on delete cascade,
  -- AES-256-GCM under SECRETS_ENCRYPTION_KEY (SecretBox), bound to the user id: it must be read back to check codes.
  secret_sealed bytea not null,
  -- When the enrolment began; enabled_at is null until a code of the secret confirmed it.
  created_at timestamptz not null,
  enabled_at timestamptz,
  -- The last TOTP time step (unix time / 30 s) a code was accepted for: no step is accepted twice.
  last_used_step bigint
);

-- Ten per account, each used once, stored as SHA-256 over the user id and the code (80 random bits).
create table mfa_recovery_codes (
  user_id text not null references users (id) on delete cascade,
  code_hash bytea not null,
  created_at timestamptz not null,
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- A login that gave the right password and waits for its second factor: the mfa_token (SHA-256;
-- 32 random bytes), its lifetime, the attempts at a code, and when it was used.
create table mfa_challenges (
  token_hash bytea primary key,
  user_id text not null references users (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  attempts integer not null default 0,
  used_at timestamptz
);
create index mfa_challenges_by_user on mfa_challenges (user_id);
