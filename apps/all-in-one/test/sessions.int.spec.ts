/**
 * A person's own account over HTTP: their sessions (listed with address, User-Agent and the
 * current one; one revoked; all others revoked: their access tokens refused by the gateway
 * within a bounded poll, their refresh tokens refused, the current one working on), their
 * profile, the organizations they belong to, and switch-org into one of them. Every refusal:
 * another person's session, bad input, an organization they do not belong to, an API key.
 *
 * The gateway trusts X-Forwarded-For here (TRUST_PROXY), so a test can say where a client is.
 */
import type { ApiClient, Tenant } from '@mailroom/testing';
import { waitFor } from '@mailroom/testing';
import { addMembership } from './colleagues';
import { usePlatform } from './fixtures';

// Many sign-ins and refused tokens from one address: the per-address limit of anonymous requests is off.
const { anon, tenant, env, signUp } = usePlatform({ env: { TRUST_PROXY: 'true', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0' } });

const as = (token: string): ApiClient => anon.withToken(token);
/** How long a revocation may take to reach the gateway (the fact's round trip through AUTH_FACTS). */
const bound = { timeoutMs: 1_000, intervalMs: 20 };

interface Tokens {
  access_token: string;
  refresh_token: string;
}

async function login(person: Tenant, headers: Record<string, string> = {}): Promise<Tokens> {
  const res = await anon.post('/api/v1/auth/login', { email: person.email, password: person.password }, { headers });
  expect(res.status).toBe(200);
  return res.body;
}

/** The id of the session an access token belongs to, as the session list says (current: true). */
async function sessionIdOf(token: string): Promise<string> {
  const res = await as(token).get('/api/v1/user/me/sessions?limit=100');
  const current = (res.body.data as { id: string; current: boolean }[]).filter((s) => s.current);
  expect(current).toHaveLength(1);
  return current[0]!.id;
}

async function refusedWithin(token: string, what: string): Promise<void> {
  await waitFor(async () => (await as(token).get('/api/v1/user/me')).status === 401, { ...bound, what });
}

function expectError(res: { status: number; body: any }, status: number, code: string): void {
  expect([res.status, res.body?.error?.code]).toEqual([status, code]);
  expect(res.body.error.request_id).toEqual(expect.any(String));
}

describe('sessions', () => {
  it('lists the live sessions newest first, with where each was last used from and the current one, page by page', async () => {
    const person = await signUp();
    const laptop = await login(person, { 'user-agent': 'laptop-agent/1.0', 'x-forwarded-for': '203.0.113.7' });
    const nowhere = await login(person, { 'user-agent': 'x'.repeat(600), 'x-forwarded-for': 'not-an-address' });
    const listed = await as(laptop.access_token).get('/api/v1/user/me/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.next_page_token).toBeNull();
    const [third, second, first] = listed.body.data;
    expect(listed.body.data).toHaveLength(3);
    expect(second).toEqual({
      id: expect.stringMatching(/^ses_/),
      created_at: expect.any(String),
      last_used_at: second.created_at,
      expires_at: expect.any(String),
      ip: '203.0.113.7',
      user_agent: 'laptop-agent/1.0',
      method: 'password',
      current: true,
    });
    // The sign-up's session: made by signup with a password.
    expect(first.method).toBe('password');
    // Cut to 512 characters; what is not an IP address is not kept.
    expect(third).toMatchObject({ current: false, ip: null, user_agent: 'x'.repeat(512) });
    // Without X-Forwarded-For, the address of the connection (IPv4 mapped into IPv6 written as IPv4).
    expect(first).toMatchObject({ current: false, ip: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) });
    expect(new Date(third.created_at) >= new Date(second.created_at) && new Date(second.created_at) >= new Date(first.created_at)).toBe(true);
    expect((await as(nowhere.access_token).get('/api/v1/user/me/sessions')).body.data.map((s: { current: boolean }) => s.current)).toEqual([true, false, false]);

    // A refresh is a use: when, from where, with what.
    const refreshed = await anon.post('/api/v1/auth/refresh', { refresh_token: laptop.refresh_token }, { headers: { 'user-agent': 'laptop-agent/2.0', 'x-forwarded-for': '2001:db8::5' } });
    expect(refreshed.status).toBe(200);
    const after = (await as(refreshed.body.access_token).get('/api/v1/user/me/sessions')).body.data.find((s: { id: string }) => s.id === second.id);
    expect(after).toMatchObject({ ip: '2001:db8::5', user_agent: 'laptop-agent/2.0', current: true, created_at: second.created_at });
    expect(new Date(after.last_used_at) > new Date(second.last_used_at)).toBe(true);

    const page1 = await as(laptop.access_token).get('/api/v1/user/me/sessions?limit=2');
    expect(page1.body.data.map((s: { id: string }) => s.id)).toEqual([third.id, second.id]);
    const page2 = await as(laptop.access_token).get(`/api/v1/user/me/sessions?limit=2&page_token=${page1.body.next_page_token}`);
    expect([page2.body.data.map((s: { id: string }) => s.id), page2.body.next_page_token]).toEqual([[first.id], null]);
    for (const bad of ['page_token=nope', 'limit=0', 'limit=101', 'current=true']) {
      expectError(await as(laptop.access_token).get(`/api/v1/user/me/sessions?${bad}`), 400, 'invalid_request');
    }
    // Another person sees only their own; an API key has no sessions.
    expect((await as(tenant.accessToken).get('/api/v1/user/me/sessions?limit=100')).body.data.map((s: { id: string }) => s.id)).not.toContain(second.id);
    expectError(await as(tenant.key).get('/api/v1/user/me/sessions'), 403, 'forbidden');
  });

  it('revokes one: its access token is refused within a second and its refresh token at once; the current one works on', async () => {
    const person = await signUp();
    const phone = await login(person);
    const phoneSession = await sessionIdOf(phone.access_token);
    const me = as(person.accessToken);
    expect((await as(phone.access_token).get('/api/v1/user/me')).status).toBe(200);

    const revoked = await me.delete(`/api/v1/user/me/sessions/${phoneSession}`);
    expect([revoked.status, revoked.text]).toEqual([204, '']);
    await refusedWithin(phone.access_token, "the revoked session's access token to be refused");
    expectError(await anon.post('/api/v1/auth/refresh', { refresh_token: phone.refresh_token }), 401, 'unauthorized');
    expect((await me.get('/api/v1/user/me')).status).toBe(200);
    expect((await me.get('/api/v1/user/me/sessions')).body.data.map((s: { id: string }) => s.id)).not.toContain(phoneSession);
    // Once ended it stays ended.
    expect((await me.delete(`/api/v1/user/me/sessions/${phoneSession}`)).status).toBe(204);

    // Another person's session, an id nobody has: 404, and theirs works on; a malformed id: 400.
    const theirs = await sessionIdOf(tenant.accessToken);
    expectError(await me.delete(`/api/v1/user/me/sessions/${theirs}`), 404, 'not_found');
    expect((await as(tenant.accessToken).get('/api/v1/user/me')).status).toBe(200);
    expectError(await me.delete('/api/v1/user/me/sessions/ses_01m8a4vabhcrd4hxzk162k1ma9'), 404, 'not_found');
    expectError(await me.delete('/api/v1/user/me/sessions/key_01m8a4vabhcrd4hxzk162k1ma9'), 400, 'invalid_request');
    expectError(await as(tenant.key).delete(`/api/v1/user/me/sessions/${theirs}`), 403, 'forbidden');

    // The current session: a logout, refused at once by the gateway that ended it.
    const mine = await sessionIdOf(person.accessToken);
    expect((await me.delete(`/api/v1/user/me/sessions/${mine}`)).status).toBe(204);
    expectError(await me.get('/api/v1/user/me'), 401, 'unauthorized');
    expectError(await anon.post('/api/v1/auth/refresh', { refresh_token: person.refreshToken }), 401, 'unauthorized');
  });

  it('revokes all the others at once, says how many, and keeps the current one', async () => {
    const person = await signUp();
    const others = [await login(person), await login(person), await login(person)];
    const stranger = await signUp();
    const me = as(person.accessToken);

    const res = await me.post('/api/v1/user/me/sessions/revoke-all');
    expect([res.status, res.body]).toEqual([200, { revoked: 3 }]);
    for (const [i, other] of others.entries()) {
      await refusedWithin(other.access_token, `the access token of session ${i + 1} to be refused`);
      expectError(await anon.post('/api/v1/auth/refresh', { refresh_token: other.refresh_token }), 401, 'unauthorized');
    }
    expect((await me.get('/api/v1/user/me')).status).toBe(200);
    expect((await me.get('/api/v1/user/me/sessions')).body.data).toEqual([expect.objectContaining({ current: true })]);
    // The current session refreshes as before; nothing is left to revoke.
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: person.refreshToken })).status).toBe(200);
    expect((await me.post('/api/v1/user/me/sessions/revoke-all')).body).toEqual({ revoked: 0 });
    // Nobody else's sessions are touched.
    expect((await as(stranger.accessToken).get('/api/v1/user/me')).status).toBe(200);
    expectError(await me.post('/api/v1/user/me/sessions/revoke-all?all=true'), 400, 'invalid_request');
    expectError(await as(tenant.key).post('/api/v1/user/me/sessions/revoke-all'), 403, 'forbidden');
  });
});

describe('the profile', () => {
  it('changes the name, answers the profile, and refuses bad bodies with 400', async () => {
    const person = await signUp();
    const me = as(person.accessToken);
    const before = (await me.get('/api/v1/user/me')).body;
    const named = await me.patch('/api/v1/user/me', { name: '  Ada Lovelace ' });
    expect(named.status).toBe(200);
    expect(named.body).toEqual({ ...before, name: 'Ada Lovelace', updated_at: expect.any(String) });
    expect(new Date(named.body.updated_at) > new Date(before.updated_at)).toBe(true);
    expect((await me.get('/api/v1/user/me')).body).toEqual(named.body);
    expect((await me.patch('/api/v1/user/me', { name: null })).body).toMatchObject({ name: null, email: person.email });

    const bad: unknown[] = [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 5 }, { email: 'other@example.com' }, { name: 'Ada', admin: true }, ['Ada']];
    for (const body of bad) expectError(await me.patch('/api/v1/user/me', body), 400, 'invalid_request');
    const unknown = await me.patch('/api/v1/user/me', { name: 'Ada', nickname: 'A' });
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ path: expect.stringMatching(/^body/), message: expect.stringMatching(/nickname/) })]);
    expect((await me.patch('/api/v1/user/me', { name: 'x'.repeat(200) })).body.name).toHaveLength(200);
    expectError(await as(tenant.key).patch('/api/v1/user/me', { name: 'Agent' }), 403, 'forbidden');
  });
});

describe('organizations and switch-org', () => {
  it("lists the person's organizations, switches into one, and the new tokens act there with the role held there", async () => {
    const person = await signUp();
    const other = await signUp();
    const userId: string = (await as(person.accessToken).get('/api/v1/user/me')).body.id;
    await addMembership(env.DATABASE_URL!, userId, other.org_id, 'viewer');

    const listed = await as(person.accessToken).get('/api/v1/user/me/organizations');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      data: expect.arrayContaining([
        { org_id: person.org_id, org_name: expect.any(String), role: 'owner', default_env_id: person.env_id, active: true },
        { org_id: other.org_id, org_name: expect.any(String), role: 'viewer', default_env_id: other.env_id, active: false },
      ]),
      next_page_token: null,
    });
    expect(listed.body.data).toHaveLength(2);
    const page1 = await as(person.accessToken).get('/api/v1/user/me/organizations?limit=1');
    const page2 = await as(person.accessToken).get(`/api/v1/user/me/organizations?limit=1&page_token=${page1.body.next_page_token}`);
    expect([...page1.body.data, ...page2.body.data].map((o: { org_id: string }) => o.org_id).sort()).toEqual([person.org_id, other.org_id].sort());
    expect(page2.body.next_page_token).toBeNull();
    expectError(await as(person.accessToken).get('/api/v1/user/me/organizations?page_token=nope'), 400, 'invalid_request');

    const switched = await as(person.accessToken).post('/api/v1/auth/switch-org', { org_id: other.org_id }, { headers: { 'user-agent': 'switcher/1' } });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({
      user: { id: userId, email: person.email },
      organization: { id: other.org_id, default_env_id: other.env_id },
      token_type: 'Bearer',
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^mrt_/),
      expires_in: expect.any(Number),
    });
    const there = as(switched.body.access_token);
    expect((await there.get('/api/v1/org')).body).toMatchObject({ id: other.org_id });
    expect((await there.get('/api/v1/user/me/organizations')).body.data.find((o: { active: boolean }) => o.active)).toMatchObject({ org_id: other.org_id, role: 'viewer' });
    // A viewer there: reads, and may not manage keys.
    expect((await there.get('/api/v1/inboxes')).status).toBe(200);
    expectError(await there.post('/api/v1/keys', { name: 'no' }), 403, 'forbidden');
    // The old session is kept, still in its own organization; the new one is listed beside it.
    expect((await as(person.accessToken).get('/api/v1/org')).body).toMatchObject({ id: person.org_id });
    const sessions = (await there.get('/api/v1/user/me/sessions')).body.data;
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toMatchObject({ current: true, user_agent: 'switcher/1' });
    // Its refresh stays in the organization switched to.
    const refreshed = await anon.post('/api/v1/auth/refresh', { refresh_token: switched.body.refresh_token });
    expect(refreshed.body.organization.id).toBe(other.org_id);
    expect((await as(refreshed.body.access_token).get('/api/v1/org')).body.id).toBe(other.org_id);
    // And back.
    const back = await there.post('/api/v1/auth/switch-org', { org_id: person.org_id });
    expect((await as(back.body.access_token).get('/api/v1/org')).body.id).toBe(person.org_id);
  });

  it('answers 404 for an organization the person does not belong to, 400 for bad bodies, 403 for an API key', async () => {
    const person = await signUp();
    const me = as(person.accessToken);
    const stranger = await signUp();
    expectError(await me.post('/api/v1/auth/switch-org', { org_id: stranger.org_id }), 404, 'not_found');
    expectError(await me.post('/api/v1/auth/switch-org', { org_id: 'org_01m8a4vabhcrd4hxzk162k1ma9' }), 404, 'not_found');
    for (const body of [{}, { org_id: 'nope' }, { org_id: stranger.env_id }, { org_id: stranger.org_id, role: 'owner' }, undefined]) {
      expectError(await me.post('/api/v1/auth/switch-org', body), 400, 'invalid_request');
    }
    expectError(await as(person.key).post('/api/v1/auth/switch-org', { org_id: person.org_id }), 403, 'forbidden');
    expectError(await anon.post('/api/v1/auth/switch-org', { org_id: person.org_id }), 401, 'unauthorized');
    expectError(await as(person.key).get('/api/v1/user/me/organizations'), 403, 'forbidden');
    // Nothing was started by the refusals.
    expect((await me.get('/api/v1/user/me/sessions')).body.data).toHaveLength(1);
  });
});
