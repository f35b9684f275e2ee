/** What the auth domain needs from the rest of the platform, as plain interfaces. */
import type { EnvironmentTombstones, Transact as TransactOf } from '@mailroom/platform';
import type { AuthTx } from '../repo/tables';
import type { UserRepository } from '../repo/user.repository';
import type { AccountMail, AuditEntry, Environment, Fact, Membership, Organization, OwnedOrganization, UserPurged } from '@mailroom/contracts';
import type { DeletedAccountRepository } from '../repo/deleted-account.repository';

export interface OrgsPort {
  createForOwner(ownerUserId: string, name: string): Promise<{ organization: Organization; environment: Environment }>;
  memberships(userId: string): Promise<Membership[]>;
  organization(orgId: string): Promise<Organization>;
  /** Throws not_found when the environment is not the organization's. */
  environment(orgId: string, envId: string): Promise<Environment>;
}

export interface RevocationPort {
  sessionRevoked(fact: { session_id: string; user_id: string; tokens_valid_until: string }): Promise<void>;
  apiKeyRevoked(fact: { key_id: string; org_id: string }): Promise<void>;
}

export interface ClientInfo {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<AuthTx>;

/** Environments orgs deleted, recorded in this schema (libs/runtime `DeletedEnvironments`). */
export type DeletedEnvironments = EnvironmentTombstones<AuthTx>;

/** Users, sessions and refresh tokens as the domain uses them (repo/user.repository.ts). */
export type Users = Pick<UserRepository, keyof UserRepository>;

/**
 * What a credential change writes beside itself, in its transaction (the outbox), published
 * after the commit: account mail (mail.account) and session revocations (AUTH_FACTS).
 */
export interface AccountOutbox {
  mail(tx: AuthTx, mail: AccountMail): Promise<void>;
  sessionRevoked(tx: AuthTx, fact: Fact<'internal.auth.session.revoked'>): Promise<void>;
  /** An audited action's entry (AUDIT, for the admin service's log). */
  audit(tx: AuthTx, entry: AuditEntry): Promise<void>;
  /** Publish what was committed now, not at the relay's next interval. */
  kick(): void;
}

/** What an outside provider vouches for about the person who signed in with it. */
export interface ProviderIdentity {
  /** Stable at the provider: OpenID Connect's `sub`, GitHub's user id. */
  subject: string;
  email: string | null;
  /** Whether the provider says the person controls `email`. */
  emailVerified: boolean;
  name: string | null;
}

/** What an attempt keeps to check the provider's answer: the state sent, the nonce and the PKCE verifier. */
export interface AttemptChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** One configured outside provider (clients/oauth-providers.client.ts). */
export interface OAuthProviderPort {
  /** Where to send the person, carrying the attempt's state, nonce and PKCE challenge. */
  authorizationUrl(checks: AttemptChecks): Promise<string>;
  /** Redeems the code of the provider's redirect and says who signed in; its checks (state, iss, aud, exp, nonce, signature) failing is a 400. */
  identify(callback: { code: string; state: string; iss?: string | undefined }, checks: AttemptChecks): Promise<ProviderIdentity>;
}

/** The configured providers by name; a name not configured has none. */
export type OAuthProviderRegistry = ReadonlyMap<string, OAuthProviderPort>;

/** Seals what must be read back (SecretBox from @mailroom/platform). */
export interface Sealer {
  seal(plaintext: string | Buffer, associatedData?: string): Buffer;
  open(sealed: Buffer, associatedData?: string): Buffer;
}
/** What auth asks orgs when a person deletes their account, and when it is purged (clients/orgs-departure.client.ts). */
export interface OrgsDeparturePort {
  /** The organizations the person owns, with their member counts (the owner included). */
  owned(userId: string): Promise<OwnedOrganization[]>;
  /** Their memberships removed, organizations they alone belonged to deleted; repeating it changes nothing. */
  purgeUser(userId: string): Promise<UserPurged>;
}

/** Accounts in any state, recovery tokens, the purge (repo/deleted-account.repository.ts). */
export type DeletedAccounts = Pick<DeletedAccountRepository, keyof DeletedAccountRepository>;
