/**
 * Signing in to an organization with its SSO (OpenID Connect). `start` takes the
 * organization's active configuration and answers where to send the person; `complete`
 * takes the attempt, has the provider redeem the code (the ID token checked: signature, iss,
 * aud, exp, nonce), reads who signed in (sso-rules.ts: a verified address in an allowed
 * domain), then:
 * - an identity linked already: its account;
 * - else the live account of the address, linked now (an account that never proved its
 *   address is refused: whoever made it did not show they own it);
 * - else a new account (no password, the address verified by the provider), linked.
 * The person becomes a member with the configuration's default role when they are not one
 * (orgs, just in time), and the session opens in that organization (method `sso`). The
 * provider is trusted for the second factor: MFA of the account is not asked.
 */
import { AppError, idSchema, newId, type Membership, type SessionResponse, type SsoAuthorization } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { SsoConfigRow, SsoRepository } from '../repo/sso.repository';
import type { AuthTx } from '../repo/tables';
import type { UserRow } from '../repo/user.repository';
import type { ClientInfo, Sealer, Transact, Users } from './ports';
import type { SessionStart } from './session-start';
import { providerSettings } from './sso-configs';
import type { SsoAttempts } from './sso-attempts';
import type { SsoDomainsPort, SsoProviderPort } from './sso-ports';
import { ssoIdentity, type SsoIdentity } from './sso-rules';

export interface SsoMembersPort {
  /** The person's membership of the organization, made with `role` when they have none. */
  join(orgId: string, userId: string, role: SsoConfigRow['default_role']): Promise<Membership>;
}

export interface SsoSignInDeps {
  transact: Transact;
  repo: Pick<SsoRepository, 'findActiveConfig' | 'findConfigById' | 'findIdentity' | 'insertIdentity' | 'touchIdentity'>;
  attempts: Pick<SsoAttempts, 'checks' | 'record' | 'take'>;
  provider: Pick<SsoProviderPort, 'authorizationUrl' | 'identify'>;
  sealer: Sealer;
  users: Pick<Users, 'findLiveById' | 'findLiveByEmail' | 'insertUser'>;
  members: SsoMembersPort;
  domains: SsoDomainsPort;
  start: Pick<SessionStart, 'signIn'>;
  clock: Clock;
}

const orgId = idSchema('organization');
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

export class SsoSignIn {
  constructor(private readonly d: SsoSignInDeps) {}

  /** Where to send a person signing in to the organization `identifier`: its id, a verified domain of it, or an address there. */
  async begin(identifier: string): Promise<SsoAuthorization> {
    const noSso = AppError.notFound('single sign-on for this organization');
    const org = await this.organizationOf(identifier);
    if (!org) throw noSso;
    const config = await this.d.repo.findActiveConfig(org);
    if (!config || config.type !== 'oidc') throw noSso;
    const checks = this.d.attempts.checks();
    const url = await this.d.provider.authorizationUrl(providerSettings(config, this.d.sealer), checks);
    const expiresAt = await this.d.attempts.record(config.id, checks);
    return { authorization_url: url, state: checks.state, expires_at: expiresAt.toISOString() };
  }

  /** The organization an identifier names: an id as it is; a domain (or an address's) by the organization that verified it. */
  private async organizationOf(identifier: string): Promise<string | undefined> {
    if (orgId.safeParse(identifier).success) return identifier;
    const domain = identifier.slice(identifier.lastIndexOf('@') + 1).trim().toLowerCase();
    if (!DOMAIN.test(domain)) return undefined;
    return (await this.d.domains.verified([domain]))[0]?.org_id;
  }

  /** The callback: a session in the configuration's organization, or a refusal. */
  async complete(callback: { code: string; state: string; iss?: string | undefined }, client: ClientInfo): Promise<SessionResponse> {
    const { configId, checks } = await this.d.attempts.take(callback.state);
    const config = await this.d.repo.findConfigById(configId);
    // Deactivated or deleted since the attempt started: it signs nobody in.
    if (!config || !config.active) throw new AppError('forbidden', "this organization's single sign-on changed since the attempt started; start again");
    const claims = await this.d.provider.identify(providerSettings(config, this.d.sealer), callback, checks);
    const identity = ssoIdentity(claims, { email: config.email_claim, name: config.name_claim }, config.allowed_domains);
    // Still the organization's verified domain (it may have been deleted, or its records broken, since the configuration was saved).
    const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
    if ((await this.d.domains.verified([domain], config.org_id)).length === 0) {
      throw new AppError('forbidden', `${domain} is no longer a verified domain of this organization: its single sign-on does not admit its addresses until it is verified again`);
    }
    const now = this.d.clock.now();
    const user = await this.account(config, identity, now);
    const membership = await this.d.members.join(config.org_id, user.id, config.default_role);
    return this.d.start.signIn(user, client, 'sso', undefined, membership);
  }

  /** The account the identity signs in: linked, linked now, or made now. */
  private async account(config: SsoConfigRow, identity: SsoIdentity, now: Date): Promise<UserRow> {
    const linked = await this.d.repo.findIdentity(config.id, identity.subject);
    if (linked) {
      const user = await this.d.users.findLiveById(linked.user_id);
      if (!user) throw new AppError('forbidden', 'the account this identity is linked to has been deleted; recover it by logging in with its password within 30 days');
      await this.d.repo.touchIdentity(config.id, identity.subject, { email: identity.email, now });
      return user;
    }
    const known = await this.d.users.findLiveByEmail(identity.email);
    if (known) {
      if (known.email_verified_at === null) {
        throw new AppError('conflict', `an account with ${identity.email} exists whose address was never verified; verify it (the code of its verification mail) or reset its password, then sign in with SSO again`);
      }
      await this.d.transact((tx) => this.link(tx, config, identity, known.id, now));
      return known;
    }
    const userId = newId('user');
    await this.d.transact(async (tx) => {
      const made = await this.d.users.insertUser({ id: userId, email: identity.email, password_hash: null, name: identity.name, now, email_verified_at: now }, tx);
      if (!made) throw new AppError('conflict', 'an account with this address was made at the same moment; try again');
      await this.link(tx, config, identity, userId, now);
    });
    return (await this.d.users.findLiveById(userId)) ?? fail('the account made by SSO vanished');
  }

  private async link(tx: AuthTx, config: SsoConfigRow, identity: SsoIdentity, userId: string, now: Date): Promise<void> {
    const row = { config_id: config.id, subject: identity.subject, user_id: userId, email: identity.email, linked_at: now, last_used_at: now };
    if (!(await this.d.repo.insertIdentity(row, tx))) throw new AppError('conflict', 'this identity was linked at the same moment by another sign-in; try again');
  }
}

function fail(message: string): never {
  throw new AppError('internal_error', message);
}
