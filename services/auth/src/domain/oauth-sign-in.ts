/**
 * Signing in with an outside provider, and linking one to a signed-in person's account. The
 * attempt (oauth-attempts.ts) gives the authorization URL; the callback takes it, has the
 * provider redeem the code and say who signed in, and then does what oauth-rules.ts decides:
 * a session of the linked account, a link to the account of the address (the provider says
 * it is verified), a new account (through signup's own creation: Accounts.create), or a
 * refusal. A link is made only by the person who started it, signed in at both ends.
 */
import { AppError, type LoginResponse, type OAuthAuthorization, type OAuthLink } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { ApiKeyRepository } from '../repo/api-key.repository';
import type { CredentialRepository } from '../repo/credential.repository';
import type { MfaRepository } from '../repo/mfa.repository';
import type { OAuthIdentityRow, OAuthRepository } from '../repo/oauth.repository';
import type { AuthTx } from '../repo/tables';
import type { UserRow } from '../repo/user.repository';
import { signInAccount } from './account-deletion';
import type { Accounts } from './accounts';
import type { MfaLogin } from './mfa-login';
import type { OAuthAttempts } from './oauth-attempts';
import { toLink } from './oauth-links';
import { linkOutcome, providerEmail, signInOutcome } from './oauth-rules';
import type { AccountOutbox, ClientInfo, DeletedAccounts, OAuthProviderPort, OAuthProviderRegistry, ProviderIdentity, RevocationPort, Transact, Users } from './ports';
import type { SessionStart } from './session-start';
import { endSessions } from './sessions-ended';

/** What the provider's redirect carried, as the client sends it back. */
export interface ProviderCallback {
  code: string;
  state: string;
  iss?: string | undefined;
  /** The browser's secret (its mailroom_login cookie, passed by the gateway); a sign-in attempt requires its starter's. */
  browser_binding?: string | undefined;
}

/** The longest name taken from a provider (an organization is named after it). */
const NAME_MAX = 100;

export interface OAuthSignInDeps {
  transact: Transact;
  providers: OAuthProviderRegistry;
  attempts: Pick<OAuthAttempts, 'start' | 'take'>;
  identities: Pick<OAuthRepository, 'findIdentity' | 'listIdentities' | 'insertIdentity' | 'touchIdentity' | 'deleteIdentitiesOf'>;
  users: Pick<Users, 'findLiveById' | 'findLiveByEmail'>;
  accounts: Pick<Accounts, 'create'>;
  start: Pick<SessionStart, 'signIn'>;
  /** Accounts in any state: one deleted within its window answers as login does, with its recovery token. */
  deletedAccounts: Pick<DeletedAccounts, 'findById'>;
  deleted: { refuseSignIn(user: UserRow): Promise<AppError> };
  /** A taken-over account's keys were made by whoever pre-registered the address: revoked, and announced. */
  apiKeys: Pick<ApiKeyRepository, 'revokeCreatedBy'>;
  revocations: Pick<RevocationPort, 'apiKeyRevoked'>;
  /** The second step of a sign-in when the account has MFA on (mfa-login.ts): a provider proves the address, not the second factor. */
  secondFactor: Pick<MfaLogin, 'required' | 'challenge'>;
  /** A taken-over account's second factor was set up by whoever pre-registered the address: it goes with their password. */
  mfa: Pick<MfaRepository, 'remove' | 'removeRecoveryCodes'>;
  credentials: Pick<CredentialRepository, 'markEmailVerified' | 'removePassword' | 'revokeSessionsOf'>;
  outbox: Pick<AccountOutbox, 'sessionRevoked' | 'kick'>;
  clock: Clock;
  accessTokenTtlSeconds: number;
}

export class OAuthSignIn {
  constructor(private readonly d: OAuthSignInDeps) {}

  /** Where to send a person signing in with `provider`. */
  async begin(provider: string, browser?: string): Promise<OAuthAuthorization> {
    return this.d.attempts.start(this.port(provider), { provider, userId: null }, browser);
  }

  /** The callback of a sign-in: a session (of the linked, the newly linked or a new account), or a refusal. */
  async complete(provider: string, callback: ProviderCallback, client: ClientInfo): Promise<LoginResponse> {
    const identity = await this.identify(provider, callback, null);
    const linked = await this.d.identities.findIdentity(provider, identity.subject);
    // Live, or deleted within its recovery window: a password-less account comes back this way.
    const linkedAny = linked ? signInAccount(await this.d.deletedAccounts.findById(linked.user_id), this.d.clock.now()) : undefined;
    if (linkedAny && linkedAny.deleted_at !== null) return this.deletedSignIn(linkedAny);
    const linkedAccount = linked ? (linkedAny ?? null) : undefined;
    const accountOfEmail = !linked && identity.email !== null ? await this.d.users.findLiveByEmail(identity.email) : undefined;
    const outcome = signInOutcome({ provider, identity, linkedAccount, accountOfEmail });
    switch (outcome.kind) {
      case 'refuse':
        throw outcome.error;
      case 'sign_in':
        await this.d.identities.touchIdentity(provider, identity.subject, { email: identity.email, now: this.d.clock.now() });
        return this.signIn(outcome.user, client);
      case 'link':
        return this.signIn(await this.linkByEmail(provider, identity, outcome.user, outcome.takeOver), client);
      case 'create': {
        const now = this.d.clock.now();
        const email = identity.email ?? fail('an account is made only for an address');
        const account = { email, name: identity.name, passwordHash: null, emailVerifiedAt: identity.emailVerified ? now : null };
        return this.d.accounts.create(account, client, async (tx, userId) => void (await this.insert(tx, provider, identity, userId, { now, used: true })));
      }
    }
  }

  /** A session, or with MFA on the token of the second step, as login answers. */
  private async signIn(user: UserRow, client: ClientInfo): Promise<LoginResponse> {
    if (await this.d.secondFactor.required(user.id)) return this.d.secondFactor.challenge(user);
    return this.d.start.signIn(user, client, 'provider');
  }

  /** A deleted account, as login answers it: the second factor first when MFA is on, then 403 account_deleted with a recovery token. */
  private async deletedSignIn(user: UserRow): Promise<LoginResponse> {
    if (await this.d.secondFactor.required(user.id)) return this.d.secondFactor.challenge(user);
    throw await this.d.deleted.refuseSignIn(user);
  }

  /** Where to send the signed-in person `userId` to link `provider` to their account. */
  async beginLink(userId: string, provider: string): Promise<OAuthAuthorization> {
    return this.d.attempts.start(this.port(provider), { provider, userId });
  }

  /** The callback of a link, for the person who started it. */
  async completeLink(userId: string, provider: string, callback: ProviderCallback): Promise<OAuthLink> {
    const identity = await this.identify(provider, callback, userId);
    const linked = await this.d.identities.findIdentity(provider, identity.subject);
    const own = (await this.d.identities.listIdentities(userId)).find((i) => i.provider === provider);
    const outcome = linkOutcome(provider, userId, linked, own);
    if (outcome.kind === 'refuse') throw outcome.error;
    if (outcome.kind === 'linked_already' && linked) return toLink(linked);
    const now = this.d.clock.now();
    return toLink(await this.d.transact((tx) => this.insert(tx, provider, identity, userId, { now, used: false })));
  }

  private port(provider: string): OAuthProviderPort {
    const port = this.d.providers.get(provider);
    if (!port) throw new AppError('not_found', `no OAuth provider named ${provider} is configured here`);
    return port;
  }

  /** Takes the attempt, then asks the provider who signed in; the address as accounts keep it. */
  private async identify(provider: string, callback: ProviderCallback, userId: string | null): Promise<ProviderIdentity> {
    const port = this.port(provider);
    const checks = await this.d.attempts.take(callback.state, { provider, userId }, callback.browser_binding);
    const said = await port.identify(callback, checks);
    const email = providerEmail(said.email);
    const name = said.name?.trim().slice(0, NAME_MAX) || null;
    return { subject: said.subject, email, emailVerified: email !== null && said.emailVerified, name };
  }

  /**
   * Links the identity to the account of its address, which the provider says is verified,
   * and answers the account as it is now. An account that never proved its address is taken
   * over: whoever made it did not show they own the address, so its password, its other links
   * and its sessions (each revocation announced through the outbox) go.
   */
  private async linkByEmail(provider: string, identity: ProviderIdentity, user: UserRow, takeOver: boolean): Promise<UserRow> {
    const now = this.d.clock.now();
    const revokedKeys = await this.d.transact(async (tx) => {
      let keys: { id: string; org_id: string }[] = [];
      if (takeOver) {
        await this.d.credentials.removePassword(user.id, now, tx);
        await this.d.identities.deleteIdentitiesOf(user.id, tx);
        await this.d.mfa.remove(user.id, tx);
        await this.d.mfa.removeRecoveryCodes(user.id, tx);
        keys = await this.d.apiKeys.revokeCreatedBy(user.id, now, tx);
        const ended = { credentials: this.d.credentials, outbox: this.d.outbox, accessTokenTtlSeconds: this.d.accessTokenTtlSeconds };
        await endSessions(tx, ended, user.id, { reason: 'address_proven_by_provider', now });
      }
      await this.d.credentials.markEmailVerified(user.id, now, tx);
      await this.insert(tx, provider, identity, user.id, { now, used: true });
      return keys;
    });
    this.d.outbox.kick();
    for (const key of revokedKeys) await this.d.revocations.apiKeyRevoked({ key_id: key.id, org_id: key.org_id });
    return (await this.d.users.findLiveById(user.id)) ?? fail('account vanished while linking');
  }

  /** Links the identity in `tx`; the same identity linked meanwhile, or another of this provider, is a conflict. */
  private async insert(tx: AuthTx, provider: string, identity: ProviderIdentity, userId: string, at: { now: Date; used: boolean }): Promise<OAuthIdentityRow> {
    const row = { provider, subject: identity.subject, user_id: userId, email: identity.email, linked_at: at.now, last_used_at: at.used ? at.now : null };
    if (!(await this.d.identities.insertIdentity(row, tx))) throw new AppError('conflict', `this ${provider} account was linked at the same moment by another request; try again`);
    return row;
  }
}

function fail(message: string): never {
  throw new AppError('internal_error', message);
}
