/**
 * Signing in to an organization with its SSO (OpenID Connect or SAML 2.0). `start` takes the
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
 *
 * SAML: `begin` sends an AuthnRequest whose ID the attempt keeps (as its nonce) with the
 * state as RelayState. `completeSaml` takes the attempt RelayState names and requires the
 * response to answer that request (InResponseTo); a response without a known RelayState is
 * unasked (IdP-initiated): it finds its configuration by the IdP's entity id among the active
 * ones (each candidate checks its signature and audience, which names the organization), and
 * is taken only when the configuration allows it and it answers no request. The assertion is
 * checked (saml-rules.ts: issuer, audience, recipient, times with the skew) and taken once (its
 * ID kept in PostgreSQL until it expires: a replay on any instance is refused).
 */
import { AppError, idSchema, newId, ssoState, type Membership, type SessionResponse, type SsoAuthorization } from '@mailroom/contracts';
import { randomBytes } from 'node:crypto';
import type { Clock } from '@mailroom/platform';
import type { SsoConfigRow, SsoRepository } from '../repo/sso.repository';
import type { AuthTx } from '../repo/tables';
import type { UserRow } from '../repo/user.repository';
import type { ClientInfo, Sealer, Transact, Users } from './ports';
import type { SessionStart } from './session-start';
import { providerSettings } from './sso-configs';
import type { SsoAttempts } from './sso-attempts';
import type { SamlLoginPort, SamlMetadataPort, SamlSettings, SamlSp, SsoDomainsPort, SsoProviderPort } from './sso-ports';
import { ssoIdentity, type SsoIdentity } from './sso-rules';
import { checkAssertion, metadataDue, refreshRefusal, SAML_REFUSED, samlClaims, type SamlAssertionFacts } from './saml-rules';

export interface SsoMembersPort {
  /** The person's membership of the organization, made with `role` when they have none. */
  join(orgId: string, userId: string, role: SsoConfigRow['default_role']): Promise<Membership>;
}

export interface SsoSignInDeps {
  transact: Transact;
  repo: Pick<SsoRepository, 'findActiveConfig' | 'findConfigById' | 'findIdentity' | 'insertIdentity' | 'touchIdentity' | 'findActiveSamlByIssuer' | 'findSamlForMetadata' | 'markAssertionSeen' | 'deleteAssertionsExpiredBefore' | 'updateConfig'>;
  attempts: Pick<SsoAttempts, 'checks' | 'record' | 'take'>;
  provider: Pick<SsoProviderPort, 'authorizationUrl' | 'identify'>;
  sealer: Sealer;
  users: Pick<Users, 'findLiveById' | 'findLiveByEmail' | 'insertUser'>;
  members: SsoMembersPort;
  domains: SsoDomainsPort;
  start: Pick<SessionStart, 'signIn' | 'refuseIfSuspended'>;
  clock: Clock;
  saml: SamlLoginPort & Pick<SamlMetadataPort, 'loadMetadata'>;
  sp: SamlSp;
  /** How old an IdP's metadata (of a URL) may be before a login reads it again. */
  samlMetadataMaxAgeMs: number;
  /** Whether an IdP may be reached over plain http (development only). */
  allowHttp: boolean;
  /** The clock skew SAML times are allowed (NotBefore, NotOnOrAfter). */
  samlSkewMs: number;
}

/** A SAML configuration as the SAML client uses it. */
export function samlSettings(config: SsoConfigRow, sp: SamlSp): SamlSettings {
  return { spEntityId: sp.entityId(config.org_id), acsUrl: sp.acsUrl, idpEntityId: config.issuer, ssoUrl: config.saml_sso_url ?? '', certificates: config.saml_certificates ?? [] };
}

const orgId = idSchema('organization');
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

export class SsoSignIn {
  constructor(private readonly d: SsoSignInDeps) {}

  /** Where to send a person signing in to the organization `identifier`: its id, a verified domain of it, or an address there. */
  async begin(identifier: string, browser?: string): Promise<SsoAuthorization> {
    const noSso = AppError.notFound('single sign-on for this organization');
    const org = await this.organizationOf(identifier);
    if (!org) throw noSso;
    const active = await this.d.repo.findActiveConfig(org);
    if (!active) throw noSso;
    const config = await this.refreshed(active);
    let checks = this.d.attempts.checks();
    let url: string;
    if (config.type === 'saml') {
      // The AuthnRequest's ID (an xs:ID: not starting with a digit) is what the response must answer.
      checks = { ...checks, nonce: `_${randomBytes(20).toString('hex')}`, codeVerifier: '' };
      url = await this.d.saml.authorizeUrl(samlSettings(config, this.d.sp), checks.nonce, checks.state);
    } else {
      url = await this.d.provider.authorizationUrl(providerSettings(config, this.d.sealer), checks);
    }
    const expiresAt = await this.d.attempts.record(config.id, checks, browser);
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
  async complete(callback: { code: string; state: string; iss?: string | undefined; browser_binding?: string | undefined }, client: ClientInfo): Promise<SessionResponse> {
    const { configId, checks } = await this.d.attempts.take(callback.state, callback.browser_binding);
    const config = await this.d.repo.findConfigById(configId);
    // Deactivated or deleted since the attempt started: it signs nobody in.
    if (!config || !config.active) throw new AppError('forbidden', "this organization's single sign-on changed since the attempt started; start again");
    if (config.type !== 'oidc') throw new AppError('invalid_state', 'this SSO attempt was started for a SAML configuration: its IdP posts to POST /api/v1/auth/sso/saml/callback');
    const claims = await this.d.provider.identify(providerSettings(config, this.d.sealer), callback, checks);
    return this.finish(config, claims, client);
  }

  /** The SAML callback (ACS): a session in the configuration's organization, or a refusal. */
  async completeSaml(callback: { SAMLResponse: string; RelayState?: string | undefined; browser_binding?: string | undefined }, client: ClientInfo): Promise<SessionResponse> {
    const peeked = this.d.saml.peek(callback.SAMLResponse);
    let config: SsoConfigRow;
    let facts: SamlAssertionFacts;
    if (callback.RelayState !== undefined && ssoState.safeParse(callback.RelayState).success) {
      // SP-initiated: the attempt RelayState names (once), and the response must answer its request.
      const { configId, checks } = await this.d.attempts.take(callback.RelayState, callback.browser_binding);
      const found = await this.d.repo.findConfigById(configId);
      if (!found || !found.active) throw new AppError('forbidden', "this organization's single sign-on changed since the attempt started; start again");
      if (found.type !== 'saml') throw new AppError('invalid_state', 'this SSO attempt was started for an OpenID Connect configuration: finish it at POST /api/v1/auth/sso/oidc/callback');
      config = found;
      facts = await this.d.saml.verify(samlSettings(config, this.d.sp), callback.SAMLResponse);
      if (facts.inResponseTo !== checks.nonce) throw new AppError('invalid_code', `${SAML_REFUSED}: it answers ${facts.inResponseTo === null ? 'no request (unasked)' : `the request ${facts.inResponseTo}`}, not the request of this attempt`);
    } else {
      ({ config, facts } = await this.unasked(peeked.issuer, callback.SAMLResponse));
      if (facts.inResponseTo !== null) throw new AppError('invalid_code', `${SAML_REFUSED}: it answers a request (InResponseTo ${facts.inResponseTo}) but carries no RelayState of an attempt this API started`);
      if (!config.allow_idp_initiated) throw new AppError('forbidden', "this organization's single sign-on takes no unasked (IdP-initiated) responses: start at GET /api/v1/auth/sso/{org_identifier}, or have its owner set allow_idp_initiated");
    }
    if (config.want_assertions_encrypted && !peeked.encrypted) throw new AppError('invalid_code', `${SAML_REFUSED}: this organization requires encrypted assertions and this one is not`);
    const now = this.d.clock.now();
    const settings = samlSettings(config, this.d.sp);
    const until = checkAssertion(facts, { idpEntityId: settings.idpEntityId, audience: settings.spEntityId, recipient: settings.acsUrl, skewMs: this.d.samlSkewMs }, now);
    // Taken once: the id is kept until the assertion could no longer be used (expired ones go first).
    await this.d.repo.deleteAssertionsExpiredBefore(now);
    if (!(await this.d.repo.markAssertionSeen({ issuer: config.issuer, assertion_id: facts.id!, expires_at: until }))) {
      throw new AppError('invalid_code', `${SAML_REFUSED}: this assertion was used already (a replay)`);
    }
    return this.finish(config, samlClaims(facts, { email: config.email_claim, name: config.name_claim }), client);
  }

  /** An unasked response's configuration: among the active ones of its IdP, the one whose checks it passes (audience names the organization). */
  private async unasked(issuer: string | undefined, samlResponse: string): Promise<{ config: SsoConfigRow; facts: SamlAssertionFacts }> {
    const candidates = issuer ? await this.d.repo.findActiveSamlByIssuer(issuer) : [];
    if (candidates.length === 0) throw new AppError('forbidden', `no organization's single sign-on takes responses from ${issuer ?? 'an IdP that does not name itself'} (and RelayState names no attempt of this API)`);
    let refusal: unknown;
    for (const config of candidates) {
      try {
        const current = await this.refreshed(config);
        return { config: current, facts: await this.d.saml.verify(samlSettings(current, this.d.sp), samlResponse) };
      } catch (err) {
        refusal ??= err;
      }
    }
    throw refusal;
  }

  /**
   * A SAML configuration whose metadata comes from a URL, read again when it is older than
   * allowed (rotated certificates are taken up). What is read is kept when it names the same
   * IdP with a certificate valid now; otherwise (the IdP unreachable, its metadata broken or
   * naming another IdP) the stored metadata stays, and the test route says what is wrong.
   */
  private async refreshed(config: SsoConfigRow): Promise<SsoConfigRow> {
    const now = this.d.clock.now();
    if (config.type !== 'saml' || config.saml_metadata_url === null) return config;
    // A failed read is not tried again before the interval either (starts are public: no fetch per request).
    if (!metadataDue(config.saml_metadata_read_at, config.saml_metadata_tried_at, now, this.d.samlMetadataMaxAgeMs)) return config;
    const loaded = await this.d.saml.loadMetadata({ url: config.saml_metadata_url });
    if (!loaded.ok || refreshRefusal(loaded.metadata, config.issuer, now, this.d.allowHttp)) {
      await this.d.repo.updateConfig(config.org_id, config.id, { saml_metadata_tried_at: now });
      return config;
    }
    const changes = { saml_metadata_xml: loaded.xml, saml_sso_url: loaded.metadata.ssoUrl, saml_certificates: loaded.metadata.certificates, saml_metadata_read_at: now };
    return (await this.d.repo.updateConfig(config.org_id, config.id, changes)) ?? config;
  }

  /** The SP metadata of the organization's SAML single sign-on (404 when it has none). */
  async samlMetadata(orgId: string): Promise<{ content_type: 'application/samlmetadata+xml; charset=utf-8'; text: string }> {
    if (!(await this.d.repo.findSamlForMetadata(orgId))) throw AppError.notFound('SAML single sign-on for this organization');
    return { content_type: 'application/samlmetadata+xml; charset=utf-8', text: this.d.saml.metadata(this.d.sp.entityId(orgId), this.d.sp.acsUrl) };
  }

  /** Who signed in per the provider's claims, checked, then the account, membership and session. */
  private async finish(config: SsoConfigRow, claims: Record<string, unknown>, client: ClientInfo): Promise<SessionResponse> {
    const identity = ssoIdentity(claims, { email: config.email_claim, name: config.name_claim }, config.allowed_domains);
    // Still the organization's verified domain (it may have been deleted, or its records broken, since the configuration was saved).
    const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
    if ((await this.d.domains.verified([domain], config.org_id)).length === 0) {
      throw new AppError('forbidden', `${domain} is no longer a verified domain of this organization: its single sign-on does not admit its addresses until it is verified again`);
    }
    const now = this.d.clock.now();
    const user = await this.account(config, identity, now);
    // A suspended person joins nothing (review finding); the session's own check is in its transaction.
    await this.d.start.refuseIfSuspended(user.id);
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
