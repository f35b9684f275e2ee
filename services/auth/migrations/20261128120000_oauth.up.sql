-- Signing in with an outside provider (OAuth 2 / OpenID Connect). The rules (lifetimes,
-- single use, when an identity is linked to an account) are the domain's
-- (services/auth/src/domain/oauth-*.ts).

-- An attempt to sign in (user_id null) or to link a provider to a signed-in person's account
-- (user_id set): the state it was given, as its SHA-256 (32 random bytes: a fast hash is
-- safe), and what the callback needs back, sealed with SECRETS_ENCRYPTION_KEY (the PKCE
-- verifier and the nonce). Works once, for 10 minutes.
create table oauth_attempts (
  state_hash bytea primary key,
  provider text not null,
  user_id text references users (id) on delete cascade,
  secrets_sealed bytea not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
-- Expired attempts are deleted as new ones are made.
create index oauth_attempts_expiry on oauth_attempts (expires_at);

-- An identity at a provider (its `sub`, or GitHub's user id) linked to an account.
create table oauth_identities (
  provider text not null,
  subject text not null,
  user_id text not null references users (id) on delete cascade,
  -- The address the provider last gave; null when it gave none.
  email text,
  linked_at timestamptz not null,
  last_used_at timestamptz,
  primary key (provider, subject)
);
-- One identity per provider and account: unlinking names the provider.
create unique index oauth_identities_by_user on oauth_identities (user_id, provider);
