-- The brute-force guard: failed attempts at one secret (kind) of one account identifier, known
-- or not. The identifier is stored only as HMAC-SHA256 of the lower-cased email under a key
-- derived from SECRETS_ENCRYPTION_KEY: the table does not list the addresses people tried. The
-- rule (counting, locks and their growth, forgetting) is the domain's
-- (services/auth/src/domain/attempt-limits.ts); forget_at is when a row holds nothing worth keeping.
create table attempt_guards (
  kind text not null check (kind in ('login', 'password_reset', 'email_verification', 'mfa')),
  identifier_hash bytea not null,
  failures integer not null,
  locks integer not null,
  last_failure_at timestamptz,
  locked_until timestamptz,
  forget_at timestamptz not null,
  primary key (kind, identifier_hash)
);
-- Pruning what was forgotten.
create index attempt_guards_forget on attempt_guards (forget_at);
