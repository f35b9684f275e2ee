/**
 * Signing in with outside providers over HTTP, as people do it: the API gives the
 * authorization URL, the person's browser (fetch, following the redirects and the provider's
 * forms) goes to a real OpenID provider on loopback (oidc-provider, configured here as the
 * generic provider `acme`) or to a stand-in of GitHub, and the web app posts what the
 * redirect carried back to the API's callback. A first sign-in makes an account; a verified
 * address links to its account; an unverified one does not; a signed-in person links a
 * provider from settings; the last way to sign in cannot be unlinked; a state works once.
 */
import { createDb, sql, type Kysely } from '@mailroom/db';
import { waitFor, type ApiClient, type ApiResponse } from '@mailroom/testing';
import { usePlatform } from './fixtures';
import { signInAtProvider, startGithubStandIn, startOidcProvider, type GithubStandIn, type ProviderRedirect, type TestOidcProvider } from './oauth-providers';

const APP_URL = 'https://app.oauth.test';
/** Where the providers send people back (the default: the web app's page for each provider). */
const redirectOf = (provider: string) => `${APP_URL}/oauth/${provider}/callback`;

let acme: TestOidcProvider;
let github: GithubStandIn;
beforeAll(async () => {
  acme = await startOidcProvider([redirectOf('acme')]);
  github = await startGithubStandIn();
});
const { anon, env, signUp } = usePlatform({
  tenant: false,
  services: ['gateway', 'auth', 'orgs'],
  env: () => ({
    APP_URL,
    // Many sign-ins from one address.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
    OAUTH_OIDC_PROVIDERS: 'acme',
    OAUTH_ACME_ISSUER: acme.issuer,
    OAUTH_ACME_CLIENT_ID: acme.clientId,
    OAUTH_ACME_CLIENT_SECRET: acme.clientSecret,
    OAUTH_GITHUB_CLIENT_ID: github.clientId,
    OAUTH_GITHUB_CLIENT_SECRET: github.clientSecret,
    OAUTH_GITHUB_WEB_URL: github.webUrl,
    OAUTH_GITHUB_API_URL: github.apiUrl,
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
  await acme?.close();
  await github?.close();
});

let people = 0;
const fresh = (name: string) => `${name}-${++people}-${Date.now()}@example.com`;
const as = (token: string): ApiClient => anon.withToken(token);

function expectError(res: ApiResponse, status: number, code: string): void {
  expect([res.status, res.body?.error?.code]).toEqual([status, code]);
  expect(res.body.error.request_id).toEqual(expect.any(String));
}

/** The attempt from the API, then the person at the provider: what the redirect to the web app carried. */
async function throughProvider(provider: string, login: string, start: () => Promise<ApiResponse>): Promise<ProviderRedirect> {
  const started = await start();
  expect(started.status).toBe(200);
  expect(started.body).toEqual({ authorization_url: expect.any(String), state: expect.stringMatching(/^mro_/), expires_at: expect.any(String) });
  const back = await signInAtProvider(started.body.authorization_url, redirectOf(provider), login);
  expect(back.state).toBe(started.body.state);
  return back;
}

/** A whole sign-in with `provider` as `login` there; the callback's answer. */
async function signInWith(provider: string, login: string): Promise<ApiResponse> {
  const back = await throughProvider(provider, login, () => browser.get(`/api/v1/auth/oauth/${provider}`));
  return browser.post(`/api/v1/auth/oauth/${provider}/callback`, back);
}

/** A whole link from settings, signed in with `token`; the callback's answer. */
async function linkWith(token: string, provider: string, login: string): Promise<ApiResponse> {
  const back = await throughProvider(provider, login, () => as(token).post(`/api/v1/user/me/oauth-providers/${provider}`));
  return as(token).post(`/api/v1/user/me/oauth-providers/${provider}/callback`, back);
}

async function linked(token: string): Promise<string[]> {
  const res = await as(token).get('/api/v1/user/me/oauth-providers');
  expect(res.status).toBe(200);
  return res.body.data.map((l: { provider: string }) => l.provider);
}

describe('signing in with an OpenID provider', () => {
  it('signs in with the test OpenID provider and links it: a new account first, the same one after', async () => {
    const email = fresh('alice');
    acme.people.set('alice', { email, email_verified: true, name: 'Alice Example' });
    const started = await browser.get('/api/v1/auth/oauth/acme');
    const url = new URL(started.body.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${acme.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: acme.clientId, redirect_uri: redirectOf('acme'), response_type: 'code', scope: 'openid email profile', code_challenge_method: 'S256', state: started.body.state, nonce: expect.any(String), code_challenge: expect.any(String) });

    const first = await signInWith('acme', 'alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ user: { email, name: 'Alice Example', email_verified: true }, organization: { id: expect.stringMatching(/^org_/) }, token_type: 'Bearer', refresh_token: expect.stringMatching(/^mrt_/) });
    const me = await as(first.body.access_token).get('/api/v1/user/me');
    expect(me.body).toMatchObject({ id: first.body.user.id, email });
    const links = await as(first.body.access_token).get('/api/v1/user/me/oauth-providers');
    expect(links.body).toEqual({ data: [{ provider: 'acme', email, linked_at: expect.any(String), last_used_at: expect.any(String) }], next_page_token: null });
    // No password: email and password do not sign in.
    expectError(await anon.post('/api/v1/auth/login', { email, password: 'any password at all' }), 401, 'invalid_credentials');

    const again = await signInWith('acme', 'alice');
    expect([again.status, again.body.user.id, again.body.organization.id]).toEqual([200, first.body.user.id, first.body.organization.id]);
    // The refresh token of the session works as login's does.
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: again.body.refresh_token })).status).toBe(200);
  });

  it('links the provider to the account of an address it says is verified', async () => {
    const bob = await signUp(fresh('bob'));
    acme.people.set('bob', { email: bob.email.toUpperCase(), email_verified: true });
    const res = await signInWith('acme', 'bob');
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ email: bob.email, email_verified: true });
    expect(res.body.organization.id).toBe(bob.org_id);
    expect(await linked(bob.accessToken)).toEqual(['acme']);
    // The password still signs in.
    expect((await anon.post('/api/v1/auth/login', { email: bob.email, password: bob.password })).status).toBe(200);
  });

  it('takes over an account that never proved its address: its password and sessions end', async () => {
    const email = fresh('mallory-made');
    // Someone signed up with this address and never verified it (no code from its mail was used).
    const squatter = await anon.post('/api/v1/auth/signup', { email, password: 'a password set by someone' });
    expect([squatter.status, squatter.body.user.email_verified]).toEqual([201, false]);
    acme.people.set('owner', { email, email_verified: true });
    const owner = await signInWith('acme', 'owner');
    expect([owner.status, owner.body.user.id, owner.body.user.email_verified]).toEqual([200, squatter.body.user.id, true]);
    expectError(await anon.post('/api/v1/auth/login', { email, password: 'a password set by someone' }), 401, 'invalid_credentials');
    expectError(await anon.post('/api/v1/auth/refresh', { refresh_token: squatter.body.refresh_token }), 401, 'unauthorized');
    await waitFor(async () => (await as(squatter.body.access_token).get('/api/v1/user/me')).status === 401, { timeoutMs: 1_000, intervalMs: 20, what: "the squatter's access token refused" });
    expect((await as(owner.body.access_token).get('/api/v1/user/me')).status).toBe(200);
  });

  it('does not link an address the provider does not say is verified; the person links it from settings', async () => {
    const dave = await signUp(fresh('dave'));
    acme.people.set('dave', { email: dave.email, email_verified: false });
    const refused = await signInWith('acme', 'dave');
    expectError(refused, 409, 'email_taken');
    expect(refused.body.error.message).toMatch(/sign in with your password, then link acme from your settings/);
    expect(await linked(dave.accessToken)).toEqual([]);

    const link = await linkWith(dave.accessToken, 'acme', 'dave');
    expect([link.status, link.body]).toEqual([200, { provider: 'acme', email: dave.email, linked_at: expect.any(String), last_used_at: null }]);
    expect(await linked(dave.accessToken)).toEqual(['acme']);
    const signedIn = await signInWith('acme', 'dave');
    expect([signedIn.status, signedIn.body.user.email]).toEqual([200, dave.email]);
  });

  it('links only for the person who started it, and never an identity of another account', async () => {
    const carol = await signUp(fresh('carol'));
    const erin = await signUp(fresh('erin'));
    acme.people.set('carol-at-acme', { email: 'carol.elsewhere@example.org', email_verified: true });
    // Erin completes an attempt Carol started: refused, and the attempt is spent.
    const back = await throughProvider('acme', 'carol-at-acme', () => as(carol.accessToken).post('/api/v1/user/me/oauth-providers/acme'));
    expectError(await as(erin.accessToken).post('/api/v1/user/me/oauth-providers/acme/callback', back), 400, 'invalid_state');
    expectError(await as(carol.accessToken).post('/api/v1/user/me/oauth-providers/acme/callback', back), 400, 'invalid_state');
    // Nor is a link attempt finished by the public callback.
    const other = await throughProvider('acme', 'carol-at-acme', () => as(carol.accessToken).post('/api/v1/user/me/oauth-providers/acme'));
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', other), 400, 'invalid_state');

    expect((await linkWith(carol.accessToken, 'acme', 'carol-at-acme')).status).toBe(200);
    const taken = await linkWith(erin.accessToken, 'acme', 'carol-at-acme');
    expectError(taken, 409, 'conflict');
    expect(taken.body.error.message).toMatch(/linked to another Mailroom account/);
    // The address at the provider is not the account's: the sign-in is Carol's by the link.
    const signedIn = await signInWith('acme', 'carol-at-acme');
    expect(signedIn.body.user.email).toBe(carol.email);
  });

  it('takes a state once, on its own provider, and refuses what the provider did not send', async () => {
    acme.people.set('frank', { email: fresh('frank'), email_verified: true });
    const back = await throughProvider('acme', 'frank', () => browser.get('/api/v1/auth/oauth/acme'));
    // An issuer that is not the provider's fails openid-client's checks; the attempt is spent.
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', { ...back, iss: 'https://impostor.example' }), 400, 'invalid_code');
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', back), 400, 'invalid_state');

    const next = await throughProvider('acme', 'frank', () => browser.get('/api/v1/auth/oauth/acme'));
    expectError(await browser.post('/api/v1/auth/oauth/github/callback', next), 400, 'invalid_state');
    const again = await throughProvider('acme', 'frank', () => browser.get('/api/v1/auth/oauth/acme'));
    expect((await browser.post('/api/v1/auth/oauth/acme/callback', again)).status).toBe(200);
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', again), 400, 'invalid_state');
    // A code the provider never gave, with a state of ours.
    const forged = await throughProvider('acme', 'frank', () => browser.get('/api/v1/auth/oauth/acme'));
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', { ...forged, code: 'not-a-code' }), 400, 'invalid_code');
    // Another browser (login CSRF: an attacker's attempt carried to a victim) is refused; the start set the cookie as browsers keep it.
    const started = await browser.get('/api/v1/auth/oauth/acme');
    expect(started.headers.get('set-cookie')).toMatch(/^mailroom_login=mrb_[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/api\/v1\/auth; .*HttpOnly; Secure; SameSite=None$/);
    const carried = await throughProvider('acme', 'frank', () => browser.get('/api/v1/auth/oauth/acme'));
    const elsewhere = await anon.post('/api/v1/auth/oauth/acme/callback', carried);
    expectError(elsewhere, 400, 'invalid_state');
    expect(elsewhere.body.error.message).toContain('another browser');
  });

  it('keeps the state, nonce and PKCE verifier server-side: the state hashed, the others sealed', async () => {
    const started = await browser.get('/api/v1/auth/oauth/acme');
    const rows = await sql<{ secrets_sealed: Buffer; used_at: Date | null }>`select secrets_sealed, used_at from auth.oauth_attempts where state_hash = sha256(${Buffer.from(started.body.state)})`.execute(db);
    expect(rows.rows).toHaveLength(1);
    const nonce = new URL(started.body.authorization_url).searchParams.get('nonce')!;
    expect(rows.rows[0]!.secrets_sealed.includes(Buffer.from(nonce))).toBe(false);
    expect(new Date(started.body.expires_at).getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
  });
});

describe('unlinking', () => {
  it('never the last way to sign in', async () => {
    const email = fresh('gina');
    acme.people.set('gina', { email, email_verified: true });
    const gina = (await signInWith('acme', 'gina')).body;
    const me = as(gina.access_token);
    const last = await me.delete('/api/v1/user/me/oauth-providers/acme');
    expectError(last, 409, 'conflict');
    expect(last.body.error.message).toMatch(/last way to sign in/);

    github.signedIn = { id: 9001, login: 'gina-gh', name: null, emails: [{ email, primary: true, verified: true }] };
    expect((await linkWith(gina.access_token, 'github', 'gina-gh')).status).toBe(200);
    expect(await linked(gina.access_token)).toEqual(['acme', 'github']);
    expect((await me.delete('/api/v1/user/me/oauth-providers/acme')).status).toBe(204);
    expectError(await me.delete('/api/v1/user/me/oauth-providers/acme'), 404, 'not_found');
    expectError(await me.delete('/api/v1/user/me/oauth-providers/github'), 409, 'conflict');
    expect(await linked(gina.access_token)).toEqual(['github']);
  });

  it('any provider once a password remains', async () => {
    const hal = await signUp(fresh('hal'));
    acme.people.set('hal', { email: hal.email, email_verified: true });
    expect((await signInWith('acme', 'hal')).status).toBe(200);
    expect((await as(hal.accessToken).delete('/api/v1/user/me/oauth-providers/acme')).status).toBe(204);
    expect(await linked(hal.accessToken)).toEqual([]);
  });
});

describe('signing in with GitHub (a stand-in of its endpoints)', () => {
  it('makes an account whose address is verified only when GitHub says its primary one is', async () => {
    const verified = fresh('ivy');
    github.signedIn = { id: 4242, login: 'ivy', name: 'Ivy', emails: [{ email: fresh('ivy-old'), primary: false, verified: true }, { email: verified, primary: true, verified: true }] };
    const ivy = await signInWith('github', 'ivy');
    expect([ivy.status, ivy.body.user]).toEqual([200, expect.objectContaining({ email: verified, email_verified: true, name: 'Ivy' })]);
    expect((await signInWith('github', 'ivy')).body.user.id).toBe(ivy.body.user.id);

    const unverified = fresh('jay');
    github.signedIn = { id: 4343, login: 'jay', name: null, emails: [{ email: unverified, primary: true, verified: false }, { email: fresh('jay-other'), primary: false, verified: true }] };
    const jay = await signInWith('github', 'jay');
    expect([jay.status, jay.body.user]).toEqual([200, expect.objectContaining({ email: unverified, email_verified: false, name: 'jay' })]);
  });
});

describe('refusals', () => {
  it('answers 404 for a provider that is not configured, on both routes', async () => {
    expectError(await browser.get('/api/v1/auth/oauth/google'), 404, 'not_found');
    expectError(await browser.post('/api/v1/auth/oauth/google/callback', { code: 'c', state: `mro_${'a'.repeat(43)}` }), 404, 'not_found');
    const kim = await signUp(fresh('kim'));
    expectError(await as(kim.accessToken).post('/api/v1/user/me/oauth-providers/google'), 404, 'not_found');
  });

  it('refuses bad input with 400, and an API key on the account routes with 403', async () => {
    expectError(await browser.get('/api/v1/auth/oauth/Not_A_Name'), 400, 'invalid_request');
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', { code: 'c', state: 'not-ours' }), 400, 'invalid_request');
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', { code: 'c', state: `mro_${'a'.repeat(43)}`, extra: 1 }), 400, 'invalid_request');
    expectError(await browser.post('/api/v1/auth/oauth/acme/callback', { code: 'c', state: `mro_${'a'.repeat(43)}` }), 400, 'invalid_state');
    const lee = await signUp(fresh('lee'));
    expectError(await lee.api.get('/api/v1/user/me/oauth-providers'), 403, 'forbidden');
    expectError(await anon.get('/api/v1/user/me/oauth-providers'), 401, 'unauthorized');
  });
});
