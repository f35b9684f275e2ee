/**
 * Single sign-on per organization over HTTP (issue 26, OpenID Connect): an owner configures
 * the organization's provider (a real OpenID provider on loopback, oidc-provider; its
 * discovery checked as it is saved and by the test route), activates it, and people sign in
 * through it as browsers do (fetch through the provider's redirects and forms; the web app's
 * page posts code and state to the callback). A first sign-in makes the account and the
 * membership; a known account is linked; addresses not verified or outside the allowed
 * domains are refused; a state works once; enforcement refuses the password to members but
 * not to the owner nor to API keys. A stand-in provider gives ID tokens for another audience
 * and with another nonce, which are refused.
 */
import { createDb, sql, type Kysely } from '@mailroom/db';
import type { ApiClient, ApiResponse, Tenant } from '@mailroom/testing';
import { addColleague, addMembership, addVerifiedDomain } from './colleagues';
import { usePlatform } from './fixtures';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from './oauth-providers';
import { startStandInProvider, type StandInProvider } from './sso-providers';

const APP_URL = 'https://app.sso.test';
const REDIRECT = `${APP_URL}/sso/callback`;
const DOMAIN = 'corp.example';
/** Each organization of the tests has its own verified domain (a name is verified by one organization). */
const SIGNIN = 'signin.example';
const ENFORCED = 'enforced.example';
const STAND_IN = 'stand-in.example';

let idp: TestOidcProvider;
let standIn: StandInProvider;
beforeAll(async () => {
  idp = await startOidcProvider([REDIRECT]);
  standIn = await startStandInProvider();
});
const { anon, env, signUp, tenant } = usePlatform({
  services: ['gateway', 'auth', 'orgs', 'domains'],
  env: () => ({
    APP_URL,
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
    // The providers are on loopback: allowed here only (the SSRF guard refuses it otherwise).
    SSO_ALLOWED_CIDRS: '127.0.0.1/32',
  }),
});
/** One browser: sign-in attempts are bound to its mailroom_login cookie (set at the start, sent back at the callback). */
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
  await standIn?.close();
});

const verifiedDomain = (org: Pick<Tenant, 'org_id' | 'env_id'>, name: string) => addVerifiedDomain(db, org, name);

let people = 0;
const fresh = (name: string, domain = DOMAIN) => `${name}-${++people}-${Date.now()}@${domain}`;
const as = (token: string): ApiClient => anon.withToken(token);

function expectError(res: ApiResponse, status: number, code: string): void {
  expect([res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([status, code, expect.any(String)]);
}

function oidcConfig(over: Record<string, unknown> = {}) {
  return { type: 'oidc', issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, allowed_domains: [DOMAIN], ...over };
}

/** A configuration of the owner's organization, active. */
async function activeConfig(owner: Pick<Tenant, 'accessToken'>, over: Record<string, unknown> = {}): Promise<string> {
  const made = await as(owner.accessToken).post('/api/v1/org/sso', oidcConfig(over));
  expect(made.status).toBe(201);
  expect((await as(owner.accessToken).post(`/api/v1/org/sso/${made.body.id}/activate`)).status).toBe(200);
  return made.body.id;
}

/** The login from the API to the provider and back to the web app's page: what the redirect carried. */
async function throughProvider(orgId: string, login: string): Promise<{ code: string; state: string; iss?: string }> {
  const started = await browser.get(`/api/v1/auth/sso/${orgId}`);
  expect(started.status).toBe(200);
  expect(started.body).toEqual({ authorization_url: expect.any(String), state: expect.stringMatching(/^mrs_/), expires_at: expect.any(String) });
  const back = await signInAtProvider(started.body.authorization_url, REDIRECT, login);
  expect(back.state).toBe(started.body.state);
  return back;
}

async function ssoLogin(orgId: string, login: string): Promise<ApiResponse> {
  return browser.post('/api/v1/auth/sso/oidc/callback', await throughProvider(orgId, login));
}

describe('SSO configurations', () => {
  beforeAll(() => verifiedDomain(tenant, DOMAIN));

  it('are created, listed, changed, tested, activated and deleted by the owner; the secret never comes back', async () => {
    const owner = tenant.accessToken;
    const made = await as(owner).post('/api/v1/org/sso', oidcConfig({ name: 'Corp IdP', default_role: 'viewer' }));
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^sso_/),
      org_id: tenant.org_id,
      type: 'oidc',
      name: 'Corp IdP',
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      scopes: ['openid', 'email', 'profile'],
      claim_mapping: { email: 'email', name: 'name' },
      default_role: 'viewer',
      enforced: false,
      allowed_domains: [DOMAIN],
      active: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      last_tested_at: null,
    });
    expect(JSON.stringify(made.body)).not.toContain(idp.clientSecret);
    const sealed = await sql<{ secret: Buffer }>`select client_secret_sealed as secret from auth.sso_configurations where id = ${made.body.id}`.execute(db);
    expect(sealed.rows[0]!.secret.toString('latin1')).not.toContain(idp.clientSecret);

    const listed = await as(owner).get('/api/v1/org/sso');
    expect(listed.body).toEqual({ data: [made.body], next_page_token: null });
    const changed = await as(owner).patch(`/api/v1/org/sso/${made.body.id}`, { default_role: 'member', claim_mapping: { name: 'preferred_username' } });
    expect([changed.status, changed.body.default_role, changed.body.claim_mapping]).toEqual([200, 'member', { email: 'email', name: 'preferred_username' }]);

    const tested = await as(owner).post(`/api/v1/org/sso/${made.body.id}/test`);
    expect(tested.body).toEqual({ ok: true, problem: null, message: expect.any(String), issuer: idp.issuer, authorization_endpoint: `${idp.issuer}/auth`, token_endpoint: `${idp.issuer}/token`, jwks_uri: `${idp.issuer}/jwks`, keys: 1, tested_at: expect.any(String) });

    const other = await as(owner).post('/api/v1/org/sso', oidcConfig());
    expect((await as(owner).post(`/api/v1/org/sso/${made.body.id}/activate`)).body.active).toBe(true);
    // One active at a time: activating another deactivates the first.
    expect((await as(owner).post(`/api/v1/org/sso/${other.body.id}/activate`)).body.active).toBe(true);
    const after = await as(owner).get('/api/v1/org/sso');
    expect(after.body.data.map((c: { id: string; active: boolean }) => [c.id, c.active])).toEqual([
      [made.body.id, false],
      [other.body.id, true],
    ]);
    expect((await as(owner).delete(`/api/v1/org/sso/${other.body.id}`)).status).toBe(204);
    expect((await as(owner).delete(`/api/v1/org/sso/${made.body.id}`)).status).toBe(204);
    expectError(await as(owner).post(`/api/v1/org/sso/${made.body.id}/activate`), 404, 'not_found');
    // Nothing active: no SSO for the organization.
    expectError(await browser.get(`/api/v1/auth/sso/${tenant.org_id}`), 404, 'not_found');
  });

  it('says precisely what is wrong with an issuer, as it is saved and when tested', async () => {
    const owner = tenant.accessToken;
    const refused = async (issuer: string, problem: string) => {
      const res = await as(owner).post('/api/v1/org/sso', oidcConfig({ issuer }));
      expectError(res, 422, 'unprocessable');
      expect(res.body.error.details).toEqual([{ path: 'issuer', message: problem }]);
    };
    await refused(`${idp.issuer}/not-here`, 'not_openid_issuer');
    await refused(`${idp.issuer}/`, 'issuer_mismatch');
    await refused('http://127.0.0.1:1', 'unreachable');
    // Not public and not allowed: no connection is made.
    await refused('http://10.255.255.1', 'blocked_destination');
    await refused('http://169.254.169.254', 'blocked_destination');
    standIn.misbehave = { noKeys: true };
    await refused(standIn.issuer, 'no_jwks');

    standIn.misbehave = {};
    const made = await as(owner).post('/api/v1/org/sso', oidcConfig({ issuer: standIn.issuer, client_id: standIn.clientId, client_secret: standIn.clientSecret }));
    expect(made.status).toBe(201);
    standIn.misbehave = { noKeys: true };
    const tested = await as(owner).post(`/api/v1/org/sso/${made.body.id}/test`);
    expect(tested.body).toMatchObject({ ok: false, problem: 'no_jwks', keys: 0, jwks_uri: `${standIn.issuer}/jwks` });
    standIn.misbehave = {};
    expect((await as(owner).get('/api/v1/org/sso')).body.data.find((c: { id: string }) => c.id === made.body.id).last_tested_at).toEqual(expect.any(String));
    await as(owner).delete(`/api/v1/org/sso/${made.body.id}`);
  });

  it('refuses bad input, other roles and other organizations', async () => {
    const owner = tenant.accessToken;
    // A SAML configuration has no OpenID fields (sso-saml.int.spec.ts configures one).
    expectError(await as(owner).post('/api/v1/org/sso', oidcConfig({ type: 'saml' })), 400, 'invalid_request');
    expectError(await as(owner).post('/api/v1/org/sso', oidcConfig({ allowed_domains: [] })), 400, 'invalid_request');
    // Only the organization's verified domains: its provider must not vouch for others' addresses.
    const notOurs = await as(owner).post('/api/v1/org/sso', oidcConfig({ allowed_domains: [DOMAIN, 'gmail.com'] }));
    expectError(notOurs, 422, 'unprocessable');
    expect(notOurs.body.error.details).toEqual([{ path: 'allowed_domains', message: expect.stringContaining('gmail.com is not a verified domain') }]);
    expectError(await as(owner).post('/api/v1/org/sso', oidcConfig({ scopes: ['email'] })), 400, 'invalid_request');
    expectError(await as(owner).post('/api/v1/org/sso', oidcConfig({ default_role: 'owner' })), 400, 'invalid_request');
    expectError(await as(owner).post('/api/v1/org/sso', oidcConfig({ client_secret: undefined })), 400, 'invalid_request');
    const made = await as(owner).post('/api/v1/org/sso', oidcConfig());
    const viewer = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(fresh('viewer', 'example.com')), 'member');
    expectError(await as(viewer.token).get('/api/v1/org/sso'), 403, 'forbidden');
    expectError(await tenant.api.get('/api/v1/org/sso'), 403, 'forbidden');
    const stranger = await signUp(fresh('stranger', 'example.com'));
    expectError(await as(stranger.accessToken).patch(`/api/v1/org/sso/${made.body.id}`, { enforced: true }), 404, 'not_found');
    expectError(await as(stranger.accessToken).post(`/api/v1/org/sso/${made.body.id}/activate`), 404, 'not_found');
    expectError(await as(stranger.accessToken).delete(`/api/v1/org/sso/${made.body.id}`), 404, 'not_found');
    await as(owner).delete(`/api/v1/org/sso/${made.body.id}`);
  });
});

describe('signing in with SSO', () => {
  let org: Tenant;
  beforeAll(async () => {
    org = await signUp(fresh('sso-owner', 'example.com'));
    await verifiedDomain(org, SIGNIN);
    await activeConfig(org, { allowed_domains: [SIGNIN] });
  });

  it('makes an unknown person an account and a member (just in time), in a session of method sso', async () => {
    const email = fresh('jit', SIGNIN);
    idp.people.set('jit', { email, email_verified: true, name: 'Jit Person' });
    const started = await browser.get(`/api/v1/auth/sso/${org.org_id}`);
    const url = new URL(started.body.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${idp.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: idp.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email profile', code_challenge_method: 'S256', state: started.body.state, nonce: expect.any(String) });

    const res = await ssoLogin(org.org_id, 'jit');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { email, name: 'Jit Person', email_verified: true }, organization: { id: org.org_id }, token_type: 'Bearer', refresh_token: expect.stringMatching(/^mrt_/) });
    const sessions = await as(res.body.access_token).get('/api/v1/user/me/sessions');
    expect(sessions.body.data).toEqual([expect.objectContaining({ method: 'sso', current: true })]);
    const orgs = await as(res.body.access_token).get('/api/v1/user/me/organizations');
    expect(orgs.body.data).toEqual([expect.objectContaining({ org_id: org.org_id, role: 'member', active: true })]);
    const members = await as(org.accessToken).get('/api/v1/org/members');
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual([email, 'member']);
    // No password: the password does not sign in.
    expectError(await anon.post('/api/v1/auth/login', { email, password: 'any password at all' }), 401, 'invalid_credentials');

    // Again: the same account, linked.
    const again = await ssoLogin(org.org_id, 'jit');
    expect([again.status, again.body.user.id]).toEqual([200, res.body.user.id]);
    // An SSO session stays in its organization's refresh.
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: again.body.refresh_token })).status).toBe(200);
  });

  it('links a known account of the address and makes it a member; its own organization stays its own', async () => {
    const known = await signUp(fresh('known', SIGNIN));
    const me = await as(known.accessToken).get('/api/v1/user/me');
    idp.people.set('known', { email: known.email.toUpperCase(), email_verified: true });
    const res = await ssoLogin(org.org_id, 'known');
    expect([res.status, res.body.user.id, res.body.organization.id]).toEqual([200, me.body.id, org.org_id]);
    const orgs = await as(res.body.access_token).get('/api/v1/user/me/organizations');
    expect(orgs.body.data.map((o: { org_id: string; role: string }) => [o.org_id, o.role]).sort()).toEqual([[known.org_id, 'owner'], [org.org_id, 'member']].sort());
    // An SSO session does not reach the person's other organizations.
    expectError(await as(res.body.access_token).post('/api/v1/auth/switch-org', { org_id: known.org_id }), 403, 'forbidden');
    // The password still signs in, to the person's own organization.
    const login = await anon.post('/api/v1/auth/login', { email: known.email, password: known.password });
    expect([login.status, login.body.organization.id]).toEqual([200, known.org_id]);
  });

  it('refuses an address the provider does not say is verified, or one outside the allowed domains', async () => {
    idp.people.set('unverified', { email: fresh('unverified', SIGNIN), email_verified: false });
    expectError(await ssoLogin(org.org_id, 'unverified'), 403, 'forbidden');
    idp.people.set('outsider', { email: fresh('outsider', 'elsewhere.example'), email_verified: true });
    const outsider = await ssoLogin(org.org_id, 'outsider');
    expectError(outsider, 403, 'forbidden');
    expect(outsider.body.error.message).toContain(SIGNIN);
  });

  it('takes a state once; an unknown state is refused', async () => {
    const email = fresh('twice', SIGNIN);
    idp.people.set('twice', { email, email_verified: true });
    const back = await throughProvider(org.org_id, 'twice');
    expectError(await browser.post('/api/v1/auth/sso/oidc/callback', { ...back, state: `mrs_${'A'.repeat(43)}` }), 400, 'invalid_state');
    expect((await browser.post('/api/v1/auth/sso/oidc/callback', back)).status).toBe(200);
    expectError(await browser.post('/api/v1/auth/sso/oidc/callback', back), 400, 'invalid_state');
    expectError(await browser.post('/api/v1/auth/sso/oidc/callback', { ...back, state: 'not-a-state' }), 400, 'invalid_request');
    expectError(await browser.get('/api/v1/auth/sso/not-an-org'), 404, 'not_found');
    expectError(await browser.get('/api/v1/auth/sso/unknown.example'), 404, 'not_found');
  });

  it('is finished only by the browser that started it (login CSRF: review finding)', async () => {
    idp.people.set('csrf', { email: fresh('csrf', SIGNIN), email_verified: true });
    // An attacker's attempt, carried to a victim's browser (no cookie, or its own).
    const back = await throughProvider(org.org_id, 'csrf');
    const elsewhere = await anon.post('/api/v1/auth/sso/oidc/callback', back);
    expectError(elsewhere, 400, 'invalid_state');
    expect(elsewhere.body.error.message).toContain('another browser');
    const again = await throughProvider(org.org_id, 'csrf');
    const victim = anon.withCookies();
    await victim.get(`/api/v1/auth/sso/${org.org_id}`);
    expectError(await victim.post('/api/v1/auth/sso/oidc/callback', again), 400, 'invalid_state');
    // The cookie cannot come in the body instead.
    expectError(await anon.post('/api/v1/auth/sso/oidc/callback', { ...again, browser_binding: 'mrb_x' }), 400, 'invalid_request');
  });

  it('starts from a verified domain of the organization, or an address there, as well as its id', async () => {
    for (const identifier of [SIGNIN, `someone@${SIGNIN}`, SIGNIN.toUpperCase()]) {
      const res = await browser.get(`/api/v1/auth/sso/${encodeURIComponent(identifier)}`);
      expect([res.status, new URL(res.body.authorization_url).origin]).toEqual([200, idp.issuer]);
    }
  });
});

describe('a login whose ground moved', () => {
  it('is refused when its configuration was deactivated since it started, or its domain is no longer verified', async () => {
    const domain = 'changing.example';
    const org = await signUp(fresh('changing-owner', 'example.com'));
    await verifiedDomain(org, domain);
    await activeConfig(org, { allowed_domains: [domain] });
    idp.people.set('changing', { email: fresh('changing', domain), email_verified: true });
    const back = await throughProvider(org.org_id, 'changing');
    const next = await activeConfig(org, { allowed_domains: [domain] });
    const stale = await browser.post('/api/v1/auth/sso/oidc/callback', back);
    expectError(stale, 403, 'forbidden');
    expect(stale.body.error.message).toContain('changed since the attempt started');

    const again = await throughProvider(org.org_id, 'changing');
    await sql`delete from domains.domains where org_id = ${org.org_id}`.execute(db);
    const unverified = await browser.post('/api/v1/auth/sso/oidc/callback', again);
    expectError(unverified, 403, 'forbidden');
    expect(unverified.body.error.message).toContain(`${domain} is no longer a verified domain`);
    // Nor can the configuration be saved with it.
    expectError(await as(org.accessToken).patch(`/api/v1/org/sso/${next}`, { allowed_domains: [domain] }), 422, 'unprocessable');
  });
});

describe('enforced SSO', () => {
  it('refuses the password to members (new logins, switch-org and refresh), not to the owner, and API keys keep working', async () => {
    const org = await signUp(fresh('enforcing-owner', 'example.com'));
    await verifiedDomain(org, ENFORCED);
    const configId = await activeConfig(org, { allowed_domains: [ENFORCED] });
    // A member whose only organization is this one, signed in with a password before enforcement.
    const member = await addColleague(env.DATABASE_URL!, anon, org, () => signUp(fresh('member', ENFORCED)), 'admin');
    await sql`delete from orgs.members where user_id = ${member.user_id} and org_id <> ${org.org_id}`.execute(db);
    // And one who belongs to another organization too, where the password still works.
    const both = await signUp(fresh('both'));
    const bothId = (await as(both.accessToken).get('/api/v1/user/me')).body.id;
    await addMembership(env.DATABASE_URL!, bothId, org.org_id, 'member');

    expect((await as(org.accessToken).patch(`/api/v1/org/sso/${configId}`, { enforced: true })).body.enforced).toBe(true);

    // Every sign-up of the tests has the same password (libs/testing signUpTenant).
    const login = await anon.post('/api/v1/auth/login', { email: member.email, password: tenant.password });
    expectError(login, 403, 'sso_required');
    expect(login.body.error.message).toContain(`/api/v1/auth/sso/${org.org_id}`);
    // Its session from before enforcement ends at its next refresh.
    expectError(await anon.post('/api/v1/auth/refresh', { refresh_token: member.refreshToken }), 403, 'sso_required');

    const bothLogin = await anon.post('/api/v1/auth/login', { email: both.email, password: both.password });
    expect([bothLogin.status, bothLogin.body.organization.id]).toEqual([200, both.org_id]);
    expectError(await as(bothLogin.body.access_token).post('/api/v1/auth/switch-org', { org_id: org.org_id }), 403, 'sso_required');

    // The owner's break-glass path: the password.
    const owner = await anon.post('/api/v1/auth/login', { email: org.email, password: org.password });
    expect([owner.status, owner.body.organization.id]).toEqual([200, org.org_id]);
    // API keys are not sign-ins.
    expect((await org.api.get('/api/v1/org')).status).toBe(200);

    // SSO still signs the member in.
    idp.people.set('enforced-member', { email: member.email, email_verified: true });
    const sso = await ssoLogin(org.org_id, 'enforced-member');
    expect([sso.status, sso.body.user.id, sso.body.organization.id]).toEqual([200, member.user_id, org.org_id]);
  });
});

describe('ID tokens the platform must refuse', () => {
  let org: Tenant;
  beforeAll(async () => {
    org = await signUp(fresh('stand-in-owner', 'example.com'));
    await verifiedDomain(org, STAND_IN);
    await activeConfig(org, { allowed_domains: [STAND_IN], issuer: standIn.issuer, client_id: standIn.clientId, client_secret: standIn.clientSecret });
  });
  afterEach(() => {
    standIn.misbehave = {};
  });

  async function standInLogin(): Promise<ApiResponse> {
    standIn.person = { sub: `p-${++people}`, email: fresh('stand-in', STAND_IN), email_verified: true };
    return ssoLogin(org.org_id, 'anyone');
  }

  it('accepts a well-formed one (the stand-in works)', async () => {
    expect((await standInLogin()).status).toBe(200);
  });

  it('refuses an ID token for another audience', async () => {
    standIn.misbehave = { audience: 'another-client' };
    const res = await standInLogin();
    expectError(res, 400, 'invalid_code');
  });

  it('refuses an ID token with another nonce', async () => {
    standIn.misbehave = { nonce: 'a-nonce-of-another-attempt' };
    expectError(await standInLogin(), 400, 'invalid_code');
  });
});
