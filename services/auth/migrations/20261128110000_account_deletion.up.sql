-- Soft deletion and recovery (services/auth/src/domain/account-deletion.ts, account-recovery.ts,
-- account-purge.ts). An address stays with its account, deleted or not, until the purge
-- removes the account: nobody signs up with, or moves to, the address of an account that may
-- still be recovered, and a recovered account never meets a newer one with its address.
drop index users_email_live;
create unique index users_email on users (email);
-- Deleted accounts, oldest first: what the purge looks for.
create index users_deleted on users (deleted_at, id) where deleted_at is not null;
-- When the person last proved who they are for this session (password, later a second factor
-- or an outside provider): a new sign-in sets it, switch-org carries it over from the session
-- it came from. An account without a password proves itself by a recent one.
alter table sessions add column authenticated_at timestamptz;
update sessions set authenticated_at = created_at;
alter table sessions alter column authenticated_at set not null;
alter table sessions alter column authenticated_at set default now();
-- What login gives a deleted account in its window: 32 random bytes, stored as their SHA-256,
-- working once for 15 minutes (the rules are the domain's).
create table recovery_tokens (
  token_hash bytea primary key,
  user_id text not null references users (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index recovery_tokens_by_user on recovery_tokens (user_id);
-- The live keys a person created: refused while the person is deleted, revoked at the purge.
create index api_keys_by_creator on api_keys (created_by) where revoked_at is null;
