/**
 * An organization's SSO configurations, managed by its owners and admins (sso.manage): at
 * most SSO_CONFIGS_MAX, one active. OpenID Connect only for now (`saml`: 422). The issuer is
 * discovered when it is saved (422 saying what is wrong otherwise); the client secret is
 * sealed (SecretBox, bound to the configuration's id) and never answered. Test runs
 * discovery and reads the keys, answering the problem found.
 */
import type { z } from 'zod';
import { AppError, authorize, newId, SSO_CONFIGS_MAX, type ssoConfigCreateBody, type ssoConfigUpdateBody, type AuthContext, type SsoConfig, type SsoTestResult } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { SsoConfigChanges, SsoConfigRow, SsoRepository } from '../repo/sso.repository';
import type { Sealer, Transact } from './ports';
import type { SsoDomainsPort, SsoProviderPort, SsoProviderSettings } from './sso-ports';

type CreateBody = z.output<typeof ssoConfigCreateBody>;
type UpdateBody = z.output<typeof ssoConfigUpdateBody>;

export function toSsoConfig(row: SsoConfigRow): SsoConfig {
  return {
    id: row.id,
    org_id: row.org_id,
    type: row.type,
    name: row.name,
    issuer: row.issuer,
    client_id: row.client_id,
    client_secret_set: true,
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
}

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
    private readonly repo: Pick<SsoRepository, 'insertConfig' | 'listConfigs' | 'countConfigs' | 'findConfig' | 'updateConfig' | 'lockConfigs' | 'deactivateAll' | 'activate' | 'deleteConfig'>,
    private readonly provider: Pick<SsoProviderPort, 'probe'>,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    private readonly settings: SsoConfigsSettings,
    private readonly domains: SsoDomainsPort,
  ) {}

  async create(auth: AuthContext, body: CreateBody): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    if (body.type === 'saml') throw new AppError('unprocessable', 'SAML configurations are not supported yet: configure an OpenID Connect provider (type oidc)', { details: [{ path: 'type', message: 'saml is not supported yet' }] });
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
    };
    await this.transact(async (tx) => {
      // Counted in the transaction that inserts; two creations at once may both pass at the limit's edge, which is harmless.
      if ((await this.repo.countConfigs(org_id, tx)) >= SSO_CONFIGS_MAX) throw new AppError('conflict', `an organization keeps at most ${SSO_CONFIGS_MAX} SSO configurations; delete one first`);
      await this.repo.insertConfig(row, tx);
    });
    return toSsoConfig(row);
  }

  async list(auth: AuthContext): Promise<{ data: SsoConfig[]; next_page_token: null }> {
    const { org_id } = authorize(auth, 'sso.manage');
    return { data: (await this.repo.listConfigs(org_id)).map(toSsoConfig), next_page_token: null };
  }

  async update(auth: AuthContext, id: string, body: UpdateBody): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    const current = await this.repo.findConfig(org_id, id);
    if (!current) throw AppError.notFound('SSO configuration');
    if (body.allowed_domains !== undefined) await this.ownDomains(org_id, body.allowed_domains);
    if (body.issuer !== undefined && body.issuer !== current.issuer) await this.discover(body.issuer);
    const changes: SsoConfigChanges = { updated_at: this.clock.now() };
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
    const updated = await this.repo.updateConfig(org_id, id, changes);
    if (!updated) throw AppError.notFound('SSO configuration');
    return toSsoConfig(updated);
  }

  async remove(auth: AuthContext, id: string): Promise<void> {
    const { org_id } = authorize(auth, 'sso.manage');
    if (!(await this.repo.deleteConfig(org_id, id))) throw AppError.notFound('SSO configuration');
  }

  async activate(auth: AuthContext, id: string): Promise<SsoConfig> {
    const { org_id } = authorize(auth, 'sso.manage');
    const row = await this.transact(async (tx) => {
      await this.repo.lockConfigs(org_id, tx);
      if (!(await this.repo.findConfig(org_id, id, tx))) throw AppError.notFound('SSO configuration');
      await this.repo.deactivateAll(org_id, tx);
      return this.repo.activate(org_id, id, this.clock.now(), tx);
    });
    if (!row) throw AppError.notFound('SSO configuration');
    return toSsoConfig(row);
  }

  async test(auth: AuthContext, id: string): Promise<SsoTestResult> {
    const { org_id } = authorize(auth, 'sso.manage');
    const row = await this.repo.findConfig(org_id, id);
    if (!row) throw AppError.notFound('SSO configuration');
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

/** A configuration as its provider's client uses it. */
export function providerSettings(row: SsoConfigRow, sealer: Sealer): SsoProviderSettings {
  return {
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: sealer.open(row.client_secret_sealed, secretAssociation(row.id)).toString('utf8'),
    scopes: row.scopes,
    emailClaim: row.email_claim,
  };
}
