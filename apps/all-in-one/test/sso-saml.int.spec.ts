/**
 * SAML 2.0 single sign-on over HTTP (issue 26): a real IdP on loopback (saml-idp.ts: its own
 * keys, xml-crypto signatures, metadata served over HTTP) and a browser's part played by fetch:
 * the API's start answers the IdP's SSO URL (AuthnRequest by HTTP-Redirect), the IdP answers
 * its auto-posting form, which is posted (form-encoded) to the ACS. The API is published at
 * https://api.saml.test (SSO_SAML_BASE_URL, as behind a proxy): the IdP addresses its
 * assertions there and the form is posted to the gateway's real address.
 * Shown: configuration from the metadata URL (and refusals), the test route, SP metadata,
 * SP-initiated login with JIT creation and the session's method, IdP-initiated login refused
 * unless allowed, then taken once (a replay refused), another audience and an expired
 * assertion refused, enforcement refusing the member's password.
 */
import { inflateRawSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { newId } from '@mailroom/contracts';
import { createDb, sql, type Kysely } from '@mailroom/db';
import type { ApiClient, ApiResponse, Tenant } from '@mailroom/testing';
import { addColleague, addVerifiedDomain } from './colleagues';
import { usePlatform } from './fixtures';
import { readForm, startSamlIdp, type TestSamlIdp } from './saml-idp';

const API = 'https://api.saml.test';
const ACS = `${API}/api/v1/auth/sso/saml/callback`;
const DOMAIN = 'saml-corp.example';

let idp: TestSamlIdp;
/** The platform's SP key pair: IdPs may encrypt assertions to its certificate. */
let sp: { private: string; public: string; cert: string };
beforeAll(async () => {
  idp = await startSamlIdp();
  sp = await generate([{ name: 'commonName', value: 'mailroom-sp' }], { keySize: 2048, algorithm: 'sha256' });
});
const { anon, env, signUp, tenant } = usePlatform({
  services: ['gateway', 'auth', 'orgs', 'domains'],
  env: () => ({ SSO_SAML_BASE_URL: API, RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0', SSO_ALLOWED_CIDRS: '127.0.0.1/32', SSO_SAML_SP_PRIVATE_KEY: sp.private, SSO_SAML_SP_CERTIFICATE: sp.cert }),
});
/** One browser: SP-initiated attempts are bound to its mailroom_login cookie. */
let browser: ApiClient;
beforeAll(() => {
  browser = anon.withCookies();
});
let db: Kysely<unknown>;
beforeAll(() => {
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
});
afterAll(async () => {
  await db?.destroy();
  await idp?.close();
});

const verifiedDomain = (org: Pick<Tenant, 'org_id' | 'env_id'>, name: string) => addVerifiedDomain(db, org, name);

let people = 0;
const fresh = (name: string) => `${name}-${++people}-${Date.now()}@${DOMAIN}`;
const as = (token: string): ApiClient => anon.withToken(token);
const spEntityId = (orgId: string) => `${API}/api/v1/auth/sso/saml/metadata/${orgId}`;

function expectError(res: ApiResponse, status: number, code: string): void {
  expect([res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([status, code, expect.any(String)]);
}

/** Posts an IdP's form to the ACS as a browser does (to the gateway's real address, with the browser's cookies). */
function postAcs(fields: Record<string, string>, from: ApiClient = browser): Promise<ApiResponse> {
  return from.post(new URL(ACS).pathname, undefined, { raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}

/** SP-initiated: start at the API, through the IdP's redirect and form, back to the ACS. */
async function samlLogin(orgId: string, person: { nameId: string; email: string; name?: string }): Promise<ApiResponse> {
  const started = await browser.get(`/api/v1/auth/sso/${orgId}`);
  expect(started.status).toBe(200);
  expect(started.body.authorization_url.startsWith(`${idp.metadataUrl.replace('/metadata', '/sso')}?SAMLRequest=`)).toBe(true);
  idp.user = person;
  idp.audience = spEntityId(orgId);
  const page = await fetch(started.body.authorization_url);
  expect(page.status).toBe(200);
  const form = readForm(await page.text());
  expect([form.action, form.fields.RelayState]).toEqual([ACS, started.body.state]);
  return postAcs(form.fields);
}

describe('SAML single sign-on', () => {
  let configId: string;
  beforeAll(() => verifiedDomain(tenant, DOMAIN));

  it('is configured from the IdP metadata URL; bad metadata is refused with the reason; the test route and SP metadata answer', async () => {
    const owner = as(tenant.accessToken);
    expectError(await owner.post('/api/v1/org/sso', { type: 'saml', allowed_domains: [DOMAIN] }), 400, 'invalid_request');
    expectError(await owner.post('/api/v1/org/sso', { type: 'saml', idp_metadata_url: idp.metadataUrl, idp_metadata_xml: idp.metadataXml, allowed_domains: [DOMAIN] }), 400, 'invalid_request');
    const notMetadata = await owner.post('/api/v1/org/sso', { type: 'saml', idp_metadata_xml: '<html/>', allowed_domains: [DOMAIN] });
    expectError(notMetadata, 422, 'unprocessable');
    expect(notMetadata.body.error.message).toContain('not SAML metadata');
    const noCert = await owner.post('/api/v1/org/sso', { type: 'saml', idp_metadata_xml: idp.metadataXml.replace(/<md:KeyDescriptor[\s\S]*?<\/md:KeyDescriptor>/, ''), allowed_domains: [DOMAIN] });
    expectError(noCert, 422, 'unprocessable');
    expect(noCert.body.error.message).toContain('no signing certificate');
    // The metadata URL goes through the SSRF guard (only 127.0.0.1/32 is allowed here).
    const blocked = await owner.post('/api/v1/org/sso', { type: 'saml', idp_metadata_url: 'http://10.0.0.1/metadata', allowed_domains: [DOMAIN] });
    expectError(blocked, 422, 'unprocessable');
    expect(blocked.body.error.message).toContain('blocked_destination');

    const made = await owner.post('/api/v1/org/sso', { type: 'saml', name: 'Test IdP', idp_metadata_url: idp.metadataUrl, allowed_domains: [DOMAIN] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ type: 'saml', issuer: idp.entityId, client_id: null, client_secret_set: false, active: false });
    expect(made.body.saml).toMatchObject({
      idp_entity_id: idp.entityId,
      idp_sso_url: idp.metadataUrl.replace('/metadata', '/sso'),
      idp_metadata_url: idp.metadataUrl,
      certificates: [{ fingerprint_sha256: expect.any(String), not_after: expect.any(String) }],
      attribute_mapping: { email: 'email', name: 'name' },
      want_assertions_encrypted: false,
      allow_idp_initiated: false,
      sp_entity_id: spEntityId(tenant.org_id),
      acs_url: ACS,
    });
    configId = made.body.id;
    expectError(await owner.patch(`/api/v1/org/sso/${configId}`, { client_secret: 'x' }), 400, 'invalid_request');

    const tested = await owner.post(`/api/v1/org/sso/${configId}/test`);
    expect([tested.status, tested.body.ok, tested.body.problem, tested.body.keys]).toEqual([200, true, null, 1]);
    // An IdP whose metadata is gone: the test says so, precisely.
    const gone = await startSamlIdp();
    const goneConfig = await owner.post('/api/v1/org/sso', { type: 'saml', idp_metadata_url: gone.metadataUrl, allowed_domains: [DOMAIN] });
    expect(goneConfig.status).toBe(201);
    await gone.close();
    const unreachable = await owner.post(`/api/v1/org/sso/${goneConfig.body.id}/test`);
    expect([unreachable.status, unreachable.body.ok, unreachable.body.problem, unreachable.body.message]).toEqual([200, false, 'unreachable', expect.stringContaining('could not be reached')]);
    expect((await owner.delete(`/api/v1/org/sso/${goneConfig.body.id}`)).status).toBe(204);

    const metadata = await fetch(`${anon.baseUrl}/api/v1/auth/sso/saml/metadata/${tenant.org_id}`);
    expect([metadata.status, metadata.headers.get('content-type')]).toEqual([200, 'application/samlmetadata+xml; charset=utf-8']);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${spEntityId(tenant.org_id)}"`);
    expect(xml).toContain(`Location="${ACS}"`);
    expect(xml).toContain('use="encryption"');
    expectError(await anon.get(`/api/v1/auth/sso/saml/metadata/${newId('organization')}`), 404, 'not_found');
    expect((await owner.post(`/api/v1/org/sso/${configId}/activate`)).status).toBe(200);
  });

  it('signs a new person in SP-initiated: the account and membership made just in time, the session shown with its method; metadata a day old is read again', async () => {
    await sql`update auth.sso_configurations set saml_metadata_read_at = now() - interval '2 days' where id = ${configId}`.execute(db);
    const email = fresh('jit');
    const res = await samlLogin(tenant.org_id, { nameId: `p-${email}`, email, name: 'Jit Person' });
    expect([res.status, res.body.user?.email, res.body.organization?.id]).toEqual([200, email, tenant.org_id]);
    const sessions = await as(res.body.access_token).get('/api/v1/user/me/sessions');
    expect(sessions.body.data.map((s: { method: string }) => s.method)).toContain('sso');
    const config = (await as(tenant.accessToken).get('/api/v1/org/sso')).body.data.find((c: { id: string }) => c.id === configId);
    // Read again at this login (it was two days old).
    expect(Date.parse(config.saml.metadata_refreshed_at)).toBeGreaterThan(Date.now() - 86_400_000);
    // Again: the same account, linked.
    const again = await samlLogin(tenant.org_id, { nameId: `p-${email}`, email });
    expect([again.status, again.body.user.id]).toEqual([200, res.body.user.id]);
  });

  /** The ID of the AuthnRequest an authorization URL carries. */
  const requestIdOf = (url: string) => /\sID="([^"]+)"/.exec(inflateRawSync(Buffer.from(new URL(url).searchParams.get('SAMLRequest')!, 'base64')).toString())![1]!;

  it('refuses an assertion for another audience and an expired one', async () => {
    const email = fresh('refused');
    const started = await browser.get(`/api/v1/auth/sso/${tenant.org_id}`);
    const requestId = requestIdOf(started.body.authorization_url);
    const other = await idp.response({ person: { nameId: email, email }, acs: ACS, audience: spEntityId(newId('organization')), inResponseTo: requestId });
    const wrong = await postAcs({ SAMLResponse: other, RelayState: started.body.state });
    expectError(wrong, 400, 'invalid_code');
    expect(wrong.body.error.message).toContain('audience');

    const again = await browser.get(`/api/v1/auth/sso/${tenant.org_id}`);
    const requestId2 = requestIdOf(again.body.authorization_url);
    const old = await idp.response({ person: { nameId: email, email }, acs: ACS, audience: spEntityId(tenant.org_id), inResponseTo: requestId2, notOnOrAfter: new Date(Date.now() - 10 * 60_000) });
    const expired = await postAcs({ SAMLResponse: old, RelayState: again.body.state });
    expectError(expired, 400, 'invalid_code');
    expect(expired.body.error.message).toContain('expired');
  });

  it('finishes an SP-initiated login only in the browser that started it (login CSRF: review finding)', async () => {
    const email = fresh('csrf');
    const started = await browser.get(`/api/v1/auth/sso/${tenant.org_id}`);
    const response = await idp.response({ person: { nameId: email, email }, acs: ACS, audience: spEntityId(tenant.org_id), inResponseTo: requestIdOf(started.body.authorization_url) });
    const elsewhere = await postAcs({ SAMLResponse: response, RelayState: started.body.state }, anon);
    expectError(elsewhere, 400, 'invalid_state');
    expect(elsewhere.body.error.message).toContain('another browser');
  });

  it('takes IdP-initiated responses only when allowed, each once (a replay is refused)', async () => {
    const email = fresh('unasked');
    const unasked = await idp.response({ person: { nameId: email, email }, acs: ACS, audience: spEntityId(tenant.org_id), sign: 'response' });
    expectError(await postAcs({ SAMLResponse: unasked }), 403, 'forbidden');
    expect((await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { allow_idp_initiated: true })).body.saml.allow_idp_initiated).toBe(true);
    const fresh1 = await idp.response({ person: { nameId: email, email }, acs: ACS, audience: spEntityId(tenant.org_id), sign: 'response' });
    const ok = await postAcs({ SAMLResponse: fresh1, RelayState: 'https://app.example/after' });
    expect([ok.status, ok.body.user?.email]).toEqual([200, email]);
    const replay = await postAcs({ SAMLResponse: fresh1 });
    expectError(replay, 400, 'invalid_code');
    expect(replay.body.error.message).toContain('used already');
  });

  it('unlinks the identities of a configuration whose IdP changes: the new IdP\'s same NameID is someone else (review finding)', async () => {
    const first = fresh('first');
    const signedIn = await samlLogin(tenant.org_id, { nameId: 'shared-subject', email: first });
    expect(signedIn.status).toBe(200);
    const other = await startSamlIdp();
    try {
      const changed = await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { idp_metadata_xml: other.metadataXml });
      expect([changed.status, changed.body.issuer, changed.body.saml.idp_metadata_url]).toEqual([200, other.entityId, null]);
      const linked = await sql<{ n: string }>`select count(*) as n from auth.sso_identities where config_id = ${configId}`.execute(db);
      expect(Number(linked.rows[0]!.n)).toBe(0);
      // The other IdP names someone else with the same subject: a new account, not the first person's.
      const second = fresh('second');
      const started = await browser.get(`/api/v1/auth/sso/${tenant.org_id}`);
      other.user = { nameId: 'shared-subject', email: second };
      other.audience = spEntityId(tenant.org_id);
      const form = readForm(await (await fetch(started.body.authorization_url)).text());
      const res = await postAcs(form.fields);
      expect([res.status, res.body.user.email]).toEqual([200, second]);
      expect(res.body.user.id).not.toBe(signedIn.body.user.id);
    } finally {
      // Back to the first IdP for the tests that follow.
      expect((await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { idp_metadata_url: idp.metadataUrl })).status).toBe(200);
      await other.close();
    }
  });

  it('requires encrypted assertions when the configuration says so: a plain one is refused, one encrypted to the SP signs in', async () => {
    expect((await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { want_assertions_encrypted: true })).body.saml.want_assertions_encrypted).toBe(true);
    try {
      const email = fresh('sealed');
      const plain = await samlLogin(tenant.org_id, { nameId: `s-${email}`, email });
      expectError(plain, 400, 'invalid_code');
      expect(plain.body.error.message).toContain('requires encrypted assertions');
      idp.encryptTo = { certificate: sp.cert, publicKey: sp.public };
      const sealed = await samlLogin(tenant.org_id, { nameId: `s-${email}`, email });
      expect([sealed.status, sealed.body.user?.email]).toEqual([200, email]);
    } finally {
      idp.encryptTo = undefined;
      expect((await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { want_assertions_encrypted: false })).status).toBe(200);
    }
  });

  it('with enforcement, refuses a member their password; SAML still signs them in', async () => {
    const member = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(fresh('member')), 'member');
    // This organization is their only one (the password would sign them in to another).
    await sql`delete from orgs.members where user_id = ${member.user_id} and org_id <> ${tenant.org_id}`.execute(db);
    expect((await as(tenant.accessToken).patch(`/api/v1/org/sso/${configId}`, { enforced: true })).body.enforced).toBe(true);
    expectError(await anon.post('/api/v1/auth/login', { email: member.email, password: tenant.password }), 403, 'sso_required');
    const sso = await samlLogin(tenant.org_id, { nameId: `m-${member.email}`, email: member.email });
    expect([sso.status, sso.body.user.id]).toEqual([200, member.user_id]);
  });
});
