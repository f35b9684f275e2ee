/**
 * SsoConfigs' SAML rules and the review finding on identities, with in-memory stand-ins: a
 * configuration's identities go when its provider changes (OIDC issuer, SAML entity id) and
 * stay otherwise; encrypted assertions need the platform's SP key; the test route says what
 * is wrong with the metadata (another IdP now, no certificate valid now).
 */
import { generate } from 'selfsigned';
import { AppError, type AuthContext } from '@mailroom/contracts';
import { MemoryAuditTrail, memoryTransact } from '@mailroom/testing';
import type { SsoConfigRow } from '../repo/sso.repository';
import type { AuthDb } from '../repo/tables';
import { SsoConfigs } from './sso-configs';
import type { SamlMetadataLoad, SamlMetadataPort, SsoProbe } from './sso-ports';

const ORG = 'org_0123456789abcdefghjkmnpqrs';
const owner = { kind: 'user', user_id: 'usr_1', org_id: ORG, env_id: 'env_1', role: 'owner', session_id: 'ses_1', method: 'password' } as unknown as AuthContext;
const NOW = new Date('2026-06-01T00:00:00Z');
const sp = { entityId: (o: string) => `https://api.example/md/${o}`, acsUrl: 'https://api.example/acs' };

let validCert: string;
let expiredCert: string;
beforeAll(async () => {
  const body = (pem: string) => pem.replace(/-----[^-]+-----|\s+/g, '');
  validCert = body((await generate([{ name: 'commonName', value: 'idp' }], { keySize: 2048, notBeforeDate: new Date('2026-01-01T00:00:00Z'), notAfterDate: new Date('2027-01-01T00:00:00Z') })).cert);
  expiredCert = body((await generate([{ name: 'commonName', value: 'old' }], { keySize: 2048, notBeforeDate: new Date('2024-01-01T00:00:00Z'), notAfterDate: new Date('2024-01-31T00:00:00Z') })).cert);
});

function world(opts: { decrypts?: boolean; load?: SamlMetadataLoad } = {}) {
  const rows = new Map<string, SsoConfigRow>();
  const identities = new Map<string, number>();
  const repo = {
    insertConfig: async (row: SsoConfigRow) => void rows.set(row.id, { ...row }),
    listConfigs: async () => [...rows.values()],
    countConfigs: async () => rows.size,
    findConfig: async (_o: string, id: string) => rows.get(id),
    updateConfig: async (_o: string, id: string, changes: Partial<SsoConfigRow>) => {
      const row = rows.get(id);
      if (!row) return undefined;
      Object.assign(row, changes);
      return { ...row };
    },
    lockConfigs: async () => {},
    deactivateAll: async () => {},
    activate: async () => undefined,
    deleteConfig: async () => false,
    deleteIdentitiesOf: async (id: string) => void identities.set(id, 0),
  };
  const saml: SamlMetadataPort = {
    decrypts: opts.decrypts ?? false,
    loadMetadata: async () => opts.load ?? { ok: true, xml: '<md/>', metadata: { entityId: 'https://idp.example/', ssoUrl: 'https://idp.example/sso', certificates: [validCert] } },
  };
  const probe: SsoProbe = { ok: true, problem: null, message: 'ok', metadata: {}, keys: 1 };
  const trail = new MemoryAuditTrail();
  const configs = new SsoConfigs(
    memoryTransact<AuthDb>(),
    repo as never,
    { probe: async () => probe },
    { seal: (p) => Buffer.from(p), open: (b) => b },
    { now: () => NOW },
    { allowHttp: false },
    { verified: async (names) => names.map((name) => ({ name, org_id: ORG })) },
    saml,
    sp,
    { audit: (tx, entry) => trail.record(tx, entry), kick: () => trail.kick() },
  );
  return { configs, rows, identities, saml, trail };
}

const samlBody = (over: Record<string, unknown> = {}) =>
  ({ type: 'saml', idp_metadata_url: 'https://idp.example/md', attribute_mapping: { email: 'email', name: 'name' }, want_assertions_encrypted: false, allow_idp_initiated: false, default_role: 'member', enforced: false, allowed_domains: ['corp.example'], ...over }) as never;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
}

describe('SAML configurations', () => {
  it('are made from the metadata, with the SP to give the IdP', async () => {
    const { configs } = world();
    const made = await configs.create(owner, samlBody());
    expect(made).toMatchObject({ type: 'saml', issuer: 'https://idp.example/', client_id: null, client_secret_set: false, saml: { idp_sso_url: 'https://idp.example/sso', sp_entity_id: `https://api.example/md/${ORG}`, acs_url: 'https://api.example/acs' } });
  });

  it('require encrypted assertions only when the platform has an SP key', async () => {
    expect(await code(world().configs.create(owner, samlBody({ want_assertions_encrypted: true })))).toMatch(/^unprocessable: want_assertions_encrypted: this platform has no SP encryption key/);
    expect(await code(world({ decrypts: true }).configs.create(owner, samlBody({ want_assertions_encrypted: true })))).toBe('ok');
  });

  it('refuse metadata without a certificate valid now, and plain http in production', async () => {
    const expired = world({ load: { ok: true, xml: '<md/>', metadata: { entityId: 'https://idp.example/', ssoUrl: 'https://idp.example/sso', certificates: [expiredCert] } } });
    expect(await code(expired.configs.create(owner, samlBody()))).toMatch(/^unprocessable: idp_metadata_url: no signing certificate of the IdP is valid now: the certificate .* expired at 2024-01-31/);
    expect(await code(world().configs.create(owner, samlBody({ idp_metadata_url: 'http://idp.example/md' })))).toMatch(/^invalid_request: idp_metadata_url must be an https URL/);
  });

  it('refuse the other type\'s fields on a change', async () => {
    const { configs } = world();
    const made = await configs.create(owner, samlBody());
    expect(await code(configs.update(owner, made.id, { client_secret: 'x' } as never))).toMatch(/^invalid_request: client_secret: not a field of a SAML configuration/);
  });

  it('test: another IdP named now, or no certificate valid now, is said precisely', async () => {
    const w = world();
    const made = await w.configs.create(owner, samlBody());
    (w.saml as { loadMetadata: SamlMetadataPort['loadMetadata'] }).loadMetadata = async () => ({ ok: true, xml: '<md/>', metadata: { entityId: 'https://other.example/', ssoUrl: 'https://other.example/sso', certificates: [validCert] } });
    expect(await w.configs.test(owner, made.id)).toMatchObject({ ok: false, problem: 'issuer_mismatch' });
    (w.saml as { loadMetadata: SamlMetadataPort['loadMetadata'] }).loadMetadata = async () => ({ ok: true, xml: '<md/>', metadata: { entityId: 'https://idp.example/', ssoUrl: 'https://idp.example/sso', certificates: [expiredCert] } });
    const result = await w.configs.test(owner, made.id);
    expect([result.ok, result.problem, result.message]).toEqual([false, 'no_valid_certificate', expect.stringContaining('expired at 2024-01-31')]);
    // Metadata read again that sends sign-ins over plain http is not taken in production (review finding).
    (w.saml as { loadMetadata: SamlMetadataPort['loadMetadata'] }).loadMetadata = async () => ({ ok: true, xml: '<md/>', metadata: { entityId: 'https://idp.example/', ssoUrl: 'http://idp.example/sso', certificates: [validCert] } });
    expect(await w.configs.test(owner, made.id)).toMatchObject({ ok: false, problem: 'not_saml_metadata', message: expect.stringContaining('must be an https URL') });
    (w.saml as { loadMetadata: SamlMetadataPort['loadMetadata'] }).loadMetadata = async () => ({ ok: false, problem: 'unreachable', message: 'https://idp.example/md could not be reached (ECONNREFUSED)' });
    expect(await w.configs.test(owner, made.id)).toMatchObject({ ok: false, problem: 'unreachable', message: 'https://idp.example/md could not be reached (ECONNREFUSED)' });
  });
});

describe('identities when a configuration\'s provider changes (review finding)', () => {
  it('go when the SAML metadata names another IdP, stay when it names the same one', async () => {
    const w = world();
    const made = await w.configs.create(owner, samlBody());
    w.identities.set(made.id, 3);
    await w.configs.update(owner, made.id, { idp_metadata_xml: '<md/>' } as never);
    expect(w.identities.get(made.id)).toBe(3);
    (w.saml as { loadMetadata: SamlMetadataPort['loadMetadata'] }).loadMetadata = async () => ({ ok: true, xml: '<md2/>', metadata: { entityId: 'https://other.example/', ssoUrl: 'https://other.example/sso', certificates: [validCert] } });
    await w.configs.update(owner, made.id, { idp_metadata_xml: '<md2/>' } as never);
    expect(w.identities.get(made.id)).toBe(0);
    // Audited: made, changed twice (the second time to another provider), with the fields' names and never a value.
    expect(w.trail.entries.map((e) => [e.action, e.target.id, e.details.provider_changed ?? null])).toEqual([
      ['sso.created', made.id, null],
      ['sso.updated', made.id, false],
      ['sso.updated', made.id, true],
    ]);
    expect(w.trail.entries[2]!.details.fields).toContain('issuer');
  });

  it('go when an OIDC issuer changes', async () => {
    const w = world();
    const made = await w.configs.create(owner, { type: 'oidc', issuer: 'https://a.example', client_id: 'c', client_secret: 's', scopes: ['openid'], claim_mapping: { email: 'email', name: 'name' }, default_role: 'member', enforced: false, allowed_domains: ['corp.example'] } as never);
    w.identities.set(made.id, 2);
    await w.configs.update(owner, made.id, { name: 'renamed' } as never);
    expect(w.identities.get(made.id)).toBe(2);
    await w.configs.update(owner, made.id, { issuer: 'https://b.example' } as never);
    expect(w.identities.get(made.id)).toBe(0);
  });
});
