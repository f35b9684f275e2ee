import type { ColumnType, Transaction } from '@mailroom/db';
import type { KeyScope } from '@mailroom/contracts';

type Timestamp = ColumnType<Date, Date | undefined, Date>;
type Json<T> = ColumnType<T, string, string>;

export interface UserTable {
  id: string;
  email: string;
  password_hash: string | null;
  name: string | null;
  email_verified_at: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Date | null;
}

/** An account suspended by the platform's operators: a row while it is. */
export interface UserSuspensionTable {
  user_id: string;
  suspended_at: Date;
  reason: string;
  suspended_by: string;
}

export interface SessionTable {
  id: string;
  user_id: string;
  org_id: string;
  created_at: Timestamp;
  last_refreshed_at: Timestamp;
  expires_at: Date;
  revoked_at: Date | null;
  revoked_reason: string | null;
  ip: string | null;
  user_agent: string | null;
  /** When the person last proved who they are for it: a sign-in; switch-org carries it over. */
  authenticated_at: Timestamp;
  /** How the person signed in for it (domain/sign-in-notice.ts SignInMethod, or `switched`); null for sessions older than the column. */
  method: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface RefreshTokenTable {
  token_hash: Buffer;
  session_id: string;
  created_at: Timestamp;
  expires_at: Date;
  used_at: Date | null;
}

export interface SigningKeyTable {
  kid: string;
  alg: string;
  public_jwk: Json<Record<string, unknown>>;
  private_jwk_sealed: Buffer;
  created_at: Timestamp;
  retired_at: Date | null;
}

export interface ApiKeyTable {
  id: string;
  org_id: string;
  env_id: string;
  name: string;
  key_hash: Buffer;
  key_prefix: string;
  scope: ColumnType<KeyScope | 'custom', KeyScope | 'custom' | undefined, never>;
  /** The explicit list of a custom key; null for a named scope. */
  permissions: ColumnType<string[] | null, string[] | null | undefined, never>;
  created_by: string | null;
  created_at: Timestamp;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A verification or password reset mail's code and link token (migrations/20261127100100). */
export interface OneTimeCodeTable {
  id: string;
  user_id: string;
  purpose: 'email_verification' | 'password_reset' | 'email_change';
  email: string;
  code_hash: Buffer;
  token_hash: Buffer;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: Date;
  code_expires_at: Date;
  token_expires_at: Date;
  closed_at: Date | null;
  closed_reason: 'used' | 'replaced' | null;
}

export interface OutboxTable {
  id: string;
  subject: string | null;
  payload: string;
  created_at: Timestamp;
  published_at: Date | null;
  /** The W3C traceparent of the work that wrote the row (libs/runtime Outbox); null with telemetry off. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Environments orgs deleted: no key is made in them (libs/runtime deleted-environments.ts). */
export interface DeletedEnvironmentTable {
  env_id: string;
  org_id: string;
  deleted_at: Date;
}

/** An outside provider's sign-in or link attempt (migrations/20261128120000). */
export interface OAuthAttemptTable {
  state_hash: Buffer;
  provider: string;
  /** The person linking a provider; null for a sign-in. */
  user_id: string | null;
  /** The PKCE verifier and the nonce, sealed (SecretBox). */
  secrets_sealed: Buffer;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  /** SHA-256 of the starting browser's secret (its mailroom_login cookie); null when no browser started it. */
  browser_binding_hash: Buffer | null;
}

/** An identity at an outside provider, linked to an account. */
export interface OAuthIdentityTable {
  provider: string;
  subject: string;
  user_id: string;
  email: string | null;
  linked_at: Date;
  last_used_at: Date | null;
}

/** What login gives a deleted account in its recovery window (migrations/20261128110000). */
export interface RecoveryTokenTable {
  token_hash: Buffer;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A person's TOTP secret, pending until confirmed (migrations/20261128100100). */
export interface MfaTotpTable {
  user_id: string;
  secret_sealed: Buffer;
  created_at: Date;
  enabled_at: Date | null;
  /** bigint in SQL; a time step (unix seconds / 30) fits a JS number for ages. */
  last_used_step: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface MfaRecoveryCodeTable {
  user_id: string;
  code_hash: Buffer;
  created_at: Date;
  used_at: Date | null;
}

/** A login waiting for its second factor (the mfa_token, hashed). */
export interface MfaChallengeTable {
  token_hash: Buffer;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  attempts: ColumnType<number, number | undefined, number>;
  used_at: Date | null;
}

/** Failed attempts per kind of secret and account identifier (migrations/20261128130000; the rule: domain/attempt-limits.ts). */
export interface AttemptGuardTable {
  kind: 'login' | 'password_reset' | 'email_verification' | 'mfa';
  /** HMAC-SHA256 of the lower-cased identifier (attempt-guard.ts). */
  identifier_hash: Buffer;
  failures: number;
  locks: number;
  last_failure_at: Date | null;
  locked_until: Date | null;
  forget_at: Date;
}

/** An organization's identity provider (migrations/20261129100000; the rules: domain/sso-configs.ts). */
export interface SsoConfigurationTable {
  id: string;
  org_id: string;
  type: 'oidc' | 'saml';
  name: string;
  issuer: string;
  /** OIDC only (null for SAML). */
  client_id: string | null;
  client_secret_sealed: Buffer | null;
  scopes: string[];
  email_claim: string;
  name_claim: string;
  default_role: 'admin' | 'member' | 'viewer';
  enforced: boolean;
  allowed_domains: string[];
  active: boolean;
  created_at: Date;
  updated_at: Date;
  last_tested_at: Date | null;
  // SAML only (null or false for OIDC); `issuer` is the IdP's entity id.
  saml_metadata_url: string | null;
  saml_metadata_xml: string | null;
  saml_sso_url: string | null;
  saml_certificates: string[] | null;
  saml_metadata_read_at: Date | null;
  saml_metadata_tried_at: Date | null;
  want_assertions_encrypted: boolean;
  allow_idp_initiated: boolean;
}

/** A SAML assertion taken already, until it expires (replays refused). */
export interface SamlAssertionSeenTable {
  issuer: string;
  assertion_id: string;
  expires_at: Date;
}

/** An SSO login attempt (the state's hash; nonce and PKCE verifier sealed). */
export interface SsoAttemptTable {
  state_hash: Buffer;
  config_id: string;
  secrets_sealed: Buffer;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  /** SHA-256 of the starting browser's secret (its mailroom_login cookie); null when no browser started it. */
  browser_binding_hash: Buffer | null;
}

/** A person at a configuration's provider, linked to an account. */
export interface SsoIdentityTable {
  config_id: string;
  subject: string;
  user_id: string;
  email: string;
  linked_at: Date;
  last_used_at: Date;
}

export interface AuthDb {
  users: UserTable;
  user_suspensions: UserSuspensionTable;
  sessions: SessionTable;
  refresh_tokens: RefreshTokenTable;
  signing_keys: SigningKeyTable;
  api_keys: ApiKeyTable;
  one_time_codes: OneTimeCodeTable;
  outbox: OutboxTable;
  deleted_environments: DeletedEnvironmentTable;
  oauth_attempts: OAuthAttemptTable;
  oauth_identities: OAuthIdentityTable;
  saml_assertions_seen: SamlAssertionSeenTable;
  recovery_tokens: RecoveryTokenTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodeTable;
  mfa_challenges: MfaChallengeTable;
  attempt_guards: AttemptGuardTable;
  sso_configurations: SsoConfigurationTable;
  sso_attempts: SsoAttemptTable;
  sso_identities: SsoIdentityTable;
}

/** A transaction of this schema: what the domain's Transact port opens and hands to repositories. */
export type AuthTx = Transaction<AuthDb>;
