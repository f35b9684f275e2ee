-- SAML 2.0 configurations beside OpenID Connect's (issue 26). A SAML configuration keeps
-- its IdP's metadata (inline or fetched from a URL, with when it was last read), what it
-- says (entity id in `issuer`, SSO URL, signing certificates) and the switches; it has no
-- client. The rules are the domain's (services/auth/src/domain/sso-*.ts, saml-*.ts).
alter table sso_configurations alter column client_id drop not null;
alter table sso_configurations alter column client_secret_sealed drop not null;
alter table sso_configurations add column saml_metadata_url text;
alter table sso_configurations add column saml_metadata_xml text;
alter table sso_configurations add column saml_sso_url text;
alter table sso_configurations add column saml_certificates text[];
alter table sso_configurations add column saml_metadata_read_at timestamptz;
-- When a login last tried to read it again and could not (retried after the refresh interval).
alter table sso_configurations add column saml_metadata_tried_at timestamptz;
alter table sso_configurations add column want_assertions_encrypted boolean not null default false;
alter table sso_configurations add column allow_idp_initiated boolean not null default false;
-- Unasked (IdP-initiated) responses find their configuration by the IdP's entity id.
create index sso_configurations_active_by_issuer on sso_configurations (issuer) where active;

-- Assertions taken already (their IdP and ID), until they expire: a replayed one is refused
-- whichever instance it reaches.
create table saml_assertions_seen (
  issuer text not null,
  assertion_id text not null,
  expires_at timestamptz not null,
  primary key (issuer, assertion_id)
);
create index saml_assertions_seen_expiry on saml_assertions_seen (expires_at);
