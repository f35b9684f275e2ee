/**
 * An organization's SSO configurations, managed by its owner (sso.manage): at most
 * SSO_CONFIGS_MAX, one active. OpenID Connect: the issuer is discovered when it is saved
 * (422 saying what is wrong otherwise); the client secret is sealed (SecretBox, bound to the
 * configuration's id) and never answered. SAML 2.0: the IdP's metadata (inline, or fetched
 * from its URL through the SSRF guard) is read when saved (entity id, SSO URL, signing
 * certificates, one of them valid now; 422 otherwise) and kept with when it was read.
 * Test runs discovery (OIDC) or fetches and reads the metadata and checks the certificates
 * (SAML), answering the problem found. When a configuration's provider changes (another
 * issuer or IdP entity id) the identities linked through it are unlinked: a subject is the
 * provider's, and another provider's same subject is someone else.
 */
import type { z } from 'zod';
import { AppError, auditEntryOf, authorize, newId, SSO_CONFIGS_MAX, type ssoConfigCreateBody, type ssoConfigUpdateBody, type AuditedCall, type AuditEntry, type AuthContext, type CallOrigin, type SsoConfig, type SsoTestResult } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { SsoConfigChanges, SsoConfigRow, SsoRepository } from '../repo/sso.repository';
import type { AuthTx } from '../repo/tables';
import type { AccountOutbox, Sealer, Transact } from './ports';
import { certificateFacts, refreshRefusal, usableCertificates } from './saml-rules';
import type { SamlIdpMetadata, SamlMetadataPort, SamlSp, SsoDomainsPort, SsoProviderPort, SsoProviderSettings } from './sso-ports';

type CreateBody = z.output<typeof ssoConfigCreateBody>;
type UpdateBody = z.output<typeof ssoConfigUpdateBody>;

export function toSsoConfig(row: SsoConfigRow, sp: SamlSp): SsoConfig {
  const config: SsoConfig = {
    id: row.id,
    org_id: row.org_id,
    type: row.type,
    name: row.name,
    issuer: row.issuer,
    client_id: row.client_id,
    client_secret_set: row.client_secret_sealed !== null,
    scopes: row.scopes,
    claim_mapping: { email: row.email_claim, name: row.name_claim },
    default_role: row.default_role,
    enforced: row.enforced,
    allowed_domains: row.allowed_domains,
    active: row.active,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_tested_at: row.last_tested_at?.toISOString() ?? null,
  };
  if (row.type !== 'saml') return config;
  return {
    ...config,
    saml: {
      idp_entity_id: row.issuer,
      idp_sso_url: row.saml_sso_url ?? '',
      idp_metadata_url: row.saml_metadata_url,
      certificates: (row.saml_certificates ?? []).map((c) => {
        const f = certificateFacts(c);
        return { fingerprint_sha256: f.fingerprint_sha256, not_after: f.not_after.toISOString() };
      }),
      metadata_refreshed_at: (row.saml_metadata_read_at ?? row.created_at).toISOString(),
      attribute_mapping: { email: row.email_claim, name: row.name_claim },
      want_assertions_encrypted: row.want_assertions_encrypted,
      allow_idp_initiated: row.allow_idp_initiated,
      sp_entity_id: sp.entityId(row.org_id),
      acs_url: sp.acsUrl,
    },
  };
}

type SamlCreate = Extract<CreateBody, { type: 'saml' }>;
const SAML_ONLY = ['idp_metadata_xml', 'idp_metadata_url', 'attribute_mapping', 'want_assertions_encrypted', 'allow_idp_initiated'] as const;
const OIDC_ONLY = ['issuer', 'client_id', 'client_secret', 'scopes', 'claim_mapping'] as const;

/** Sealed for its configuration: a secret moved to another row does not open. */
export function secretAssociation(configId: string): string {
  return `sso-client-secret:${configId}`;
}

export interface SsoConfigsSettings {
  /** Plain http issuers are accepted outside production only. */
  allowHttp: boolean;
}

export class SsoConfigs {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<SsoRepository, 'insertConfig' | 'listConfigs' | 'countConfigs' | 'findConfig' | 'updateConfig' | 'lockConfigs' | 'deactivateAll' | 'activate' | 'deleteConfig' | 'deleteIdentitiesOf'>,
    private readonly provider: Pick<SsoProviderPort, 'probe'>,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    private readonly settings: SsoConfigsSettings,
    private readonly domains: SsoDomainsPort,
    private readonly saml: SamlMetadataPort,
    private readonly sp: SamlSp,
    /** Configuration changes are audited (contracts AUDIT_ACTIONS): who points the organization's sign-in where. */
    private readonly trail: Pick<AccountOutbox, 'audit' | 'kick'>,
  ) {}

  async create(auth: AuthContext, body: CreateBody, origin: CallOrigin = {}): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    const call = { auth, ...origin };
    if (body.type === 'saml') return this.createSaml(org_id, body, call);
    await this.ownDomains(org_id, body.allowed_domains);
    await this.discover(body.issuer);
    const id = newId('ssoConfig');
    const now = this.clock.now();
    const row = {
      id,
      org_id,
      type: body.type,
      name: body.name ?? new URL(body.issuer).host,
      issuer: body.issuer,
      client_id: body.client_id,
      client_secret_sealed: this.sealer.seal(body.client_secret, secretAssociation(id)),
      scopes: body.scopes,
      email_claim: body.claim_mapping.email,
      name_claim: body.claim_mapping.name,
      default_role: body.default_role,
      enforced: body.enforced,
      allowed_domains: [...new Set(body.allowed_domains)],
      active: false,
      created_at: now,
      updated_at: now,
      last_tested_at: null,
      ...NO_SAML,
    };
    await this.insert(org_id, row, call);
    return toSsoConfig(row, this.sp);
  }

  private async createSaml(org_id: string, body: SamlCreate, call: AuditedCall): Promise<SsoConfig> {
    await this.ownDomains(org_id, body.allowed_domains);
    if (body.want_assertions_encrypted) this.canDecrypt();
    const now = this.clock.now();
    const { xml, metadata } = await this.readMetadata({ xml: body.idp_metadata_xml, url: body.idp_metadata_url }, now);
    const row: SsoConfigRow = {
      id: newId('ssoConfig'),
      org_id,
      type: 'saml',
      name: body.name ?? metadata.entityId.slice(0, 100),
      issuer: metadata.entityId,
      client_id: null,
      client_secret_sealed: null,
      scopes: [],
      email_claim: body.attribute_mapping.email,
      name_claim: body.attribute_mapping.name,
      default_role: body.default_role,
      enforced: body.enforced,
      allowed_domains: [...new Set(body.allowed_domains)],
      active: false,
      created_at: now,
      updated_at: now,
      last_tested_at: null,
      saml_metadata_url: body.idp_metadata_url ?? null,
      saml_metadata_xml: xml,
      saml_sso_url: metadata.ssoUrl,
      saml_certificates: metadata.certificates,
      saml_metadata_read_at: now,
      saml_metadata_tried_at: null,
      want_assertions_encrypted: body.want_assertions_encrypted,
      allow_idp_initiated: body.allow_idp_initiated,
    };
    await this.insert(org_id, row, call);
    return toSsoConfig(row, this.sp);
  }

  private async insert(org_id: string, row: SsoConfigRow, call: AuditedCall): Promise<void> {
    await this.transact(async (tx) => {
      // Counted in the transaction that inserts; two creations at once may both pass at the limit's edge, which is harmless.
      if ((await this.repo.countConfigs(org_id, tx)) >= SSO_CONFIGS_MAX) throw new AppError('conflict', `an organization keeps at most ${SSO_CONFIGS_MAX} SSO configurations; delete one first`);
      await this.repo.insertConfig(row, tx);
      await this.audited(tx, call, 'sso.created', row, { type: row.type, issuer: row.issuer, enforced: row.enforced });
    });
    this.trail.kick();
  }

  /** The audit entry of a change to a configuration, in its transaction (never a secret: names of fields, not values). */
  private audited(tx: AuthTx, call: AuditedCall, action: 'sso.created' | 'sso.updated' | 'sso.deleted' | 'sso.activated', row: Pick<SsoConfigRow, 'id' | 'org_id'>, details: AuditEntry['details']): Promise<void> {
    return this.trail.audit(tx, auditEntryOf(call, this.clock.now(), { action, org_id: row.org_id, target: { type: 'sso_configuration', id: row.id }, details }));
  }

  private canDecrypt(): void {
    if (!this.saml.decrypts) {
      throw new AppError('unprocessable', 'want_assertions_encrypted: this platform has no SP encryption key (the operator sets SSO_SAML_SP_PRIVATE_KEY and SSO_SAML_SP_CERTIFICATE); leave it false', { details: [{ path: 'want_assertions_encrypted', message: 'no SP encryption key is configured' }] });
    }
  }

  /** The IdP's metadata read (fetched first when a URL), with a signing certificate valid now; 422 saying what is wrong otherwise. */
  private async readMetadata(source: { xml?: string | undefined; url?: string | undefined }, now: Date): Promise<{ xml: string; metadata: SamlIdpMetadata }> {
    const path = source.xml !== undefined ? 'idp_metadata_xml' : 'idp_metadata_url';
    const refuse = (message: string) => new AppError('unprocessable', `${path}: ${message}`, { details: [{ path, message }] });
    if (source.url !== undefined && !this.settings.allowHttp && !source.url.startsWith('https://')) {
      throw new AppError('invalid_request', 'idp_metadata_url must be an https URL', { details: [{ path, message: 'must be an https URL' }] });
    }
    const loaded = await this.saml.loadMetadata(source);
    if (!loaded.ok) throw refuse(`${loaded.message} (${loaded.problem})`);
    const { valid, problems } = usableCertificates(loaded.metadata.certificates, now);
    if (valid.length === 0) throw refuse(`no signing certificate of the IdP is valid now: ${problems.join('; ')}`);
    if (!this.settings.allowHttp && !loaded.metadata.ssoUrl.startsWith('https://')) throw refuse(`the IdP's SingleSignOnService (${loaded.metadata.ssoUrl}) must be an https URL`);
    return loaded;
  }

  async list(auth: AuthContext): Promise<{ data: SsoConfig[]; next_page_token: null }> {
    const { org_id } = authorize(auth, 'sso.manage');
    return { data: (await this.repo.listConfigs(org_id)).map((r) => toSsoConfig(r, this.sp)), next_page_token: null };
  }

  async update(auth: AuthContext, id: string, body: UpdateBody, origin: CallOrigin = {}): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    const current = await this.repo.findConfig(org_id, id);
    if (!current) throw AppError.notFound('SSO configuration');
    const foreign = (current.type === 'saml' ? OIDC_ONLY : SAML_ONLY).filter((k) => body[k] !== undefined);
    if (foreign.length > 0) {
      throw new AppError('invalid_request', `${foreign.join(', ')}: not a field of ${current.type === 'saml' ? 'a SAML' : 'an OpenID Connect'} configuration`, { details: foreign.map((k) => ({ path: k, message: `not a field of a ${current.type} configuration` })) });
    }
    if (body.idp_metadata_xml !== undefined && body.idp_metadata_url !== undefined) {
      throw new AppError('invalid_request', 'give the IdP metadata as idp_metadata_xml or idp_metadata_url (one of them)', { details: [{ path: 'idp_metadata_xml', message: 'one of idp_metadata_xml and idp_metadata_url' }] });
    }
    if (body.allowed_domains !== undefined) await this.ownDomains(org_id, body.allowed_domains);
    if (body.issuer !== undefined && body.issuer !== current.issuer) await this.discover(body.issuer);
    if (body.want_assertions_encrypted === true) this.canDecrypt();
    const now = this.clock.now();
    const changes: SsoConfigChanges = { updated_at: now };
    if (body.idp_metadata_xml !== undefined || body.idp_metadata_url !== undefined) {
      const { xml, metadata } = await this.readMetadata({ xml: body.idp_metadata_xml, url: body.idp_metadata_url }, now);
      Object.assign(changes, { issuer: metadata.entityId, saml_metadata_xml: xml, saml_metadata_url: body.idp_metadata_url ?? null, saml_sso_url: metadata.ssoUrl, saml_certificates: metadata.certificates, saml_metadata_read_at: now });
    }
    if (body.attribute_mapping?.email !== undefined) changes.email_claim = body.attribute_mapping.email;
    if (body.attribute_mapping?.name !== undefined) changes.name_claim = body.attribute_mapping.name;
    if (body.want_assertions_encrypted !== undefined) changes.want_assertions_encrypted = body.want_assertions_encrypted;
    if (body.allow_idp_initiated !== undefined) changes.allow_idp_initiated = body.allow_idp_initiated;
    if (body.name !== undefined) changes.name = body.name;
    if (body.issuer !== undefined) changes.issuer = body.issuer;
    if (body.client_id !== undefined) changes.client_id = body.client_id;
    if (body.client_secret !== undefined) changes.client_secret_sealed = this.sealer.seal(body.client_secret, secretAssociation(id));
    if (body.scopes !== undefined) changes.scopes = body.scopes;
    if (body.claim_mapping?.email !== undefined) changes.email_claim = body.claim_mapping.email;
    if (body.claim_mapping?.name !== undefined) changes.name_claim = body.claim_mapping.name;
    if (body.default_role !== undefined) changes.default_role = body.default_role;
    if (body.enforced !== undefined) changes.enforced = body.enforced;
    if (body.allowed_domains !== undefined) changes.allowed_domains = [...new Set(body.allowed_domains)];
    const newProvider = changes.issuer !== undefined && changes.issuer !== current.issuer;
    const updated = await this.transact(async (tx) => {
      // Another provider: its subjects are other people's (review finding: identities survived an issuer change).
      if (newProvider) await this.repo.deleteIdentitiesOf(id, tx);
      const saved = await this.repo.updateConfig(org_id, id, changes, tx);
      const fields = Object.keys(changes).filter((k) => k !== 'updated_at').map((k) => k.replace(/_sealed$/, '')).sort().join(', ');
      if (saved) await this.audited(tx, { auth, ...origin }, 'sso.updated', saved, { fields, issuer: saved.issuer, enforced: saved.enforced, provider_changed: newProvider });
      return saved;
    });
    if (!updated) throw AppError.notFound('SSO configuration');
    this.trail.kick();
    return toSsoConfig(updated, this.sp);
  }

  async remove(auth: AuthContext, id: string, origin: CallOrigin = {}): Promise<void> {
    const { org_id } = authorize(auth, 'sso.manage');
    await this.transact(async (tx) => {
      if (!(await this.repo.deleteConfig(org_id, id, tx))) throw AppError.notFound('SSO configuration');
      await this.audited(tx, { auth, ...origin }, 'sso.deleted', { id, org_id }, {});
    });
    this.trail.kick();
  }

  async activate(auth: AuthContext, id: string, origin: CallOrigin = {}): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    const row = await this.transact(async (tx) => {
      await this.repo.lockConfigs(org_id, tx);
      if (!(await this.repo.findConfig(org_id, id, tx))) throw AppError.notFound('SSO configuration');
      await this.repo.deactivateAll(org_id, tx);
      const active = await this.repo.activate(org_id, id, this.clock.now(), tx);
      if (active) await this.audited(tx, { auth, ...origin }, 'sso.activated', active, { type: active.type, issuer: active.issuer, enforced: active.enforced });
      return active;
    });
    if (!row) throw AppError.notFound('SSO configuration');
    this.trail.kick();
    return toSsoConfig(row, this.sp);
  }

  async test(auth: AuthContext, id: string): Promise<SsoTestResult> {
    const { org_id } = authorize(auth, 'sso.manage');
    const row = await this.repo.findConfig(org_id, id);
    if (!row) throw AppError.notFound('SSO configuration');
    if (row.type === 'saml') return this.testSaml(org_id, row);
    const found = await this.provider.probe(row.issuer);
    const now = this.clock.now();
    await this.repo.updateConfig(org_id, id, { last_tested_at: now });
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    return {
      ok: found.ok,
      problem: found.problem,
      message: found.message,
      issuer: row.issuer,
      authorization_endpoint: text(found.metadata.authorization_endpoint),
      token_endpoint: text(found.metadata.token_endpoint),
      jwks_uri: text(found.metadata.jwks_uri),
      keys: found.keys,
      tested_at: now.toISOString(),
    };
  }

  /**
   * A SAML configuration's round trip: its metadata fetched again when it has a URL (the
   * stored copy otherwise), read, and its signing certificates' validity. What was fetched
   * and read is kept (the metadata refreshed) when it is usable and names the same IdP.
   */
  private async testSaml(org_id: string, row: SsoConfigRow): Promise<SsoTestResult> {
    const now = this.clock.now();
    const loaded = await this.saml.loadMetadata(row.saml_metadata_url !== null ? { url: row.saml_metadata_url } : { xml: row.saml_metadata_xml ?? '' });
    const result = (r: Pick<SsoTestResult, 'ok' | 'problem' | 'message'> & { sso?: string | null; keys?: number }): SsoTestResult => ({
      ok: r.ok,
      problem: r.problem,
      message: r.message,
      issuer: row.issuer,
      authorization_endpoint: r.sso ?? null,
      token_endpoint: null,
      jwks_uri: row.saml_metadata_url,
      keys: r.keys ?? 0,
      tested_at: now.toISOString(),
    });
    let answer: SsoTestResult;
    if (!loaded.ok) {
      answer = result({ ok: false, problem: loaded.problem, message: loaded.message });
    } else {
      const { metadata } = loaded;
      const { valid, problems } = usableCertificates(metadata.certificates, now);
      const refused = refreshRefusal(metadata, row.issuer, now, this.settings.allowHttp);
      if (refused) {
        answer = result({ ok: false, ...refused, sso: metadata.ssoUrl });
      } else {
        const soon = metadata.certificates.map(certificateFacts).filter((f) => f.not_after.getTime() - now.getTime() < 30 * 86_400_000);
        const warning = soon.length ? `; ${soon.map((f) => `${f.fingerprint_sha256} expires at ${f.not_after.toISOString()}`).join(', ')}` : '';
        answer = result({ ok: true, problem: null, message: `${row.issuer} is a SAML IdP with ${valid.length} valid signing certificate(s)${problems.length ? ` (${problems.join('; ')})` : ''}${warning}`, sso: metadata.ssoUrl, keys: valid.length });
      }
    }
    const changes: SsoConfigChanges = { last_tested_at: now };
    if (answer.ok && loaded.ok) Object.assign(changes, { saml_metadata_xml: loaded.xml, saml_sso_url: loaded.metadata.ssoUrl, saml_certificates: loaded.metadata.certificates, saml_metadata_read_at: now });
    await this.repo.updateConfig(org_id, row.id, changes);
    return answer;
  }

  /**
   * Every admitted domain must be a verified domain of the organization (the domains
   * service): an organization's provider may vouch for its own addresses only, never for
   * another's (which would sign their accounts in).
   */
  private async ownDomains(orgId: string, names: readonly string[]): Promise<void> {
    const verified = new Set((await this.domains.verified(names, orgId)).map((d) => d.name));
    const missing = [...new Set(names)].filter((n) => !verified.has(n));
    if (missing.length === 0) return;
    const message = `${missing.join(', ')} ${missing.length === 1 ? 'is not a verified domain' : 'are not verified domains'} of this organization: add and verify ${missing.length === 1 ? 'it' : 'them'} first (POST /api/v1/domains, then /verify)`;
    throw new AppError('unprocessable', `allowed_domains: ${message}`, { details: [{ path: 'allowed_domains', message }] });
  }

  /** The issuer checked as it is saved: http only outside production, and discovered (422 with the problem otherwise). */
  private async discover(issuer: string): Promise<void> {
    if (!this.settings.allowHttp && !issuer.startsWith('https://')) {
      throw new AppError('invalid_request', 'issuer must be an https URL', { details: [{ path: 'issuer', message: 'must be an https URL' }] });
    }
    const found = await this.provider.probe(issuer);
    if (!found.ok) throw new AppError('unprocessable', `issuer: ${found.message} (${found.problem})`, { details: [{ path: 'issuer', message: found.problem }] });
  }
}

const NO_SAML = { saml_metadata_url: null, saml_metadata_xml: null, saml_sso_url: null, saml_certificates: null, saml_metadata_read_at: null, saml_metadata_tried_at: null, want_assertions_encrypted: false, allow_idp_initiated: false };

/** A configuration as its provider's client uses it. */
export function providerSettings(row: SsoConfigRow, sealer: Sealer): SsoProviderSettings {
  if (row.client_id === null || row.client_secret_sealed === null) throw new AppError('internal_error', 'an OpenID Connect configuration without its client');
  return {
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: sealer.open(row.client_secret_sealed, secretAssociation(row.id)).toString('utf8'),
    scopes: row.scopes,
    emailClaim: row.email_claim,
  };
}
