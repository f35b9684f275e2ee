-- Single sign-on per organization (issue 26). The rules (one active configuration, the
-- attempts' lifetime and single use, who is linked or made a member) are the domain's
-- (services/auth/src/domain/sso-*.ts).

-- An organization's identity provider. OpenID Connect now (issuer, client); `saml` is kept
-- in the type for later. The client secret is sealed with SECRETS_ENCRYPTION_KEY.
create table sso_configurations (
  id text primary key,
  org_id text not null,
  type text not null check (type in ('oidc', 'saml')),
  name text not null,
  issuer text not null,
  client_id text not null,
  client_secret_sealed bytea not null,
  scopes text[] not null,
  email_claim text not null,
  name_claim text not null,
  default_role text not null check (default_role in ('admin', 'member', 'viewer')),
  enforced boolean not null default false,
  allowed_domains text[] not null,
  active boolean not null default false,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  last_tested_at timestamptz
);
create index sso_configurations_by_org on sso_configurations (org_id, id);
-- One active configuration per organization.
create unique index sso_configurations_active on sso_configurations (org_id) where active;

-- A login attempt: its state as SHA-256 (32 random bytes), the nonce and PKCE verifier
-- sealed. Works once, for 10 minutes, with the configuration it was started with.
create table sso_attempts (
  state_hash bytea primary key,
  config_id text not null references sso_configurations (id) on delete cascade,
  secrets_sealed bytea not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index sso_attempts_expiry on sso_attempts (expires_at);

-- A person at a configuration's provider (its `sub`) linked to an account.
create table sso_identities (
  config_id text not null references sso_configurations (id) on delete cascade,
  subject text not null,
  user_id text not null references users (id) on delete cascade,
  email text not null,
  linked_at timestamptz not null,
  last_used_at timestamptz not null,
  primary key (config_id, subject)
);
create index sso_identities_by_user on sso_identities (user_id);

-- How a session was signed in (password, password_and_mfa, provider, sso, switched); null before this column.
alter table sessions add column method text;
