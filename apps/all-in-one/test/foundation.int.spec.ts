/**
 * The foundation's vertical slice, driven as a user would over HTTP: signup, login, API
 * keys, the organization, and every way a request can be refused.
 */
import { generateKeyPair, SignJWT, exportJWK, decodeProtectedHeader } from 'jose';
import { connectTestBus, waitFor } from '@mailroom/testing';
import { ManualClock } from '@mailroom/platform';
import { usePlatform } from './fixtures';

const clock = new ManualClock(new Date());
const { anon: api, env } = usePlatform({ clock, tenant: false });

async function signup(email = `u${Math.random().toString(36).slice(2)}@example.com`, password = 'correct horse battery') {
  const res = await api.post('/api/v1/auth/signup', { email, password, name: 'Ada' });
  expect(res.status).toBe(201);
  return { email, password, ...res.body };
}

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String), request_id: expect.any(String) }) });
  expect(res.headers.get('x-request-id')).toBe(res.body.error.request_id);
}

/** Every value in the gateway's Idempotency-Key bucket, as text. */
async function idempotencyBucketText(): Promise<string> {
  const bus = await connectTestBus(env);
  try {
    const stream = `KV_${bus.ns.stream('IDEMPOTENCY')}`;
    const { state } = await bus.jsm.streams.info(stream);
    const texts: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const m = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m) texts.push(Buffer.from(m.data).toString('utf8'));
    }
    expect(texts.length).toBeGreaterThan(0);
    return texts.join('\n');
  } finally {
    await bus.drain();
  }
}

describe('signup, login and the organization', () => {
  it('signs up, logs in, creates an API key and reads the organization with it', async () => {
    const account = await signup('Ada.Lovelace@Example.com');
    expect(account.user).toMatchObject({ email: 'ada.lovelace@example.com', name: 'Ada', email_verified: false });
    expect(account.user.id).toMatch(/^usr_[0-9a-z]{26}$/);
    expect(account.organization.id).toMatch(/^org_/);
    expect(account.organization.default_env_id).toMatch(/^env_/);
    expect(account).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(account.refresh_token).toMatch(/^mrt_/);

    const login = await api.post('/api/v1/auth/login', { email: 'ADA.lovelace@example.com', password: account.password });
    expect(login.status).toBe(200);
    expect(login.body.user.id).toBe(account.user.id);
    expect(login.body.organization.id).toBe(account.organization.id);

    const created = await api.post('/api/v1/keys', { name: 'ci' }, { token: login.body.access_token });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', org_id: account.organization.id, env_id: account.organization.default_env_id });
    expect(created.body.key).toMatch(/^mr_[0-9A-Za-z]{43}$/);
    expect(created.body.key_prefix).toBe(created.body.key.slice(0, 10));

    const org = await api.get('/api/v1/org', { token: created.body.key });
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ id: account.organization.id, name: "Ada's organization", plan: 'free', status: 'active' });

    const me = await api.get('/api/v1/user/me', { token: login.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual(account.user);
  });

  it('never shows a key secret again and lists newest first with paging', async () => {
    const { access_token } = await signup();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await api.post('/api/v1/keys', { name }, { token: access_token })).body.id);
    const page1 = await api.get('/api/v1/keys?limit=2', { token: access_token });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((k: { id: string }) => k.id)).toEqual([ids[2], ids[1]]);
    expect(page1.text).not.toContain('"key":');
    const page2 = await api.get(`/api/v1/keys?limit=2&page_token=${page1.body.next_page_token}`, { token: access_token });
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_page_token: null });
    const one = await api.get(`/api/v1/keys/${ids[0]}`, { token: access_token });
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('key');
    for (const bad of ['0', '-1', '101', '1000', 'abc', '2.5']) {
      expectError(await api.get(`/api/v1/keys?limit=${bad}`, { token: access_token }), 400, 'invalid_request');
    }
    expectError(await api.get('/api/v1/keys?page_token=garbage', { token: access_token }), 400, 'invalid_request');
  });

  it('refuses a duplicate email, a short password and an unknown field', async () => {
    const account = await signup();
    expectError(await api.post('/api/v1/auth/signup', { email: account.email.toUpperCase(), password: 'another long password' }), 409, 'email_taken');
    const short = await api.post('/api/v1/auth/signup', { email: 'short@example.com', password: 'short' });
    expectError(short, 400, 'invalid_request');
    expect(short.body.error.details).toEqual([expect.objectContaining({ path: 'body.password' })]);
    expectError(await api.post('/api/v1/auth/signup', { email: 'not-an-email', password: 'long enough password' }), 400, 'invalid_request');
    expectError(await api.post('/api/v1/auth/signup', { email: 'x@example.com', password: 'long enough password', admin: true }), 400, 'invalid_request');
  });

  it('answers a wrong password and an unknown email the same way', async () => {
    const account = await signup();
    const wrong = await api.post('/api/v1/auth/login', { email: account.email, password: 'wrong password!!' });
    const unknown = await api.post('/api/v1/auth/login', { email: 'nobody@example.com', password: 'wrong password!!' });
    expectError(wrong, 401, 'invalid_credentials');
    expectError(unknown, 401, 'invalid_credentials');
    expect(unknown.body.error.message).toBe(wrong.body.error.message);
  });
});

describe('access tokens', () => {
  it('rejects alg none, a token signed by another key, a tampered one and an expired one', async () => {
    const account = await signup();
    const [header, payload] = account.access_token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
    expectError(await api.get('/api/v1/user/me', { token: none }), 401, 'unauthorized');

    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const kid = decodeProtectedHeader(account.access_token).kid!;
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' }).sign(privateKey);
    expectError(await api.get('/api/v1/user/me', { token: forged }), 401, 'unauthorized');
    const otherKid = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: 'sgk_other', typ: 'at+jwt' }).sign(privateKey);
    expectError(await api.get('/api/v1/user/me', { token: otherKid }), 401, 'unauthorized');
    expect((await exportJWK(privateKey)).kty).toBe('OKP');

    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, role: 'owner', org: 'org_01m814pazgr402qxg4meymh955' })).toString('base64url')}.${account.access_token.split('.')[2]}`;
    expectError(await api.get('/api/v1/user/me', { token: tampered }), 401, 'unauthorized');

    expect((await api.get('/api/v1/user/me', { token: account.access_token })).status).toBe(200);
    clock.advance(16 * 60_000);
    try {
      expectError(await api.get('/api/v1/user/me', { token: account.access_token }), 401, 'token_expired');
    } finally {
      clock.advance(-16 * 60_000);
    }
  });

  it('rotates refresh tokens and revokes the session when a used one comes back', async () => {
    const account = await signup();
    const first = await api.post('/api/v1/auth/refresh', { refresh_token: account.refresh_token });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(account.refresh_token);
    expect((await api.get('/api/v1/user/me', { token: first.body.access_token })).status).toBe(200);

    const reuse = await api.post('/api/v1/auth/refresh', { refresh_token: account.refresh_token });
    expectError(reuse, 401, 'unauthorized');
    // The whole session is gone: the newer refresh token and its access token too.
    expectError(await api.post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token }), 401, 'unauthorized');
    await waitFor(async () => (await api.get('/api/v1/user/me', { token: first.body.access_token })).status === 401, { what: 'revocation to reach the gateway' });
    expectError(await api.post('/api/v1/auth/refresh', { refresh_token: 'mrt_nonsense' }), 401, 'unauthorized');
  });

  it('logs out: the session tokens stop working, other sessions do not', async () => {
    const account = await signup();
    const other = await api.post('/api/v1/auth/login', { email: account.email, password: account.password });
    const out = await api.post('/api/v1/auth/logout', undefined, { token: account.access_token });
    expect(out.status).toBe(204);
    expect(out.text).toBe('');
    expectError(await api.get('/api/v1/user/me', { token: account.access_token }), 401, 'unauthorized');
    expectError(await api.post('/api/v1/auth/refresh', { refresh_token: account.refresh_token }), 401, 'unauthorized');
    expect((await api.get('/api/v1/user/me', { token: other.body.access_token })).status).toBe(200);
  });
});

describe('API keys', () => {
  it('stops working within a second of revocation, and is 404 for other organizations', async () => {
    const owner = await signup();
    const stranger = await signup();
    const key = (await api.post('/api/v1/keys', { name: 'temp' }, { token: owner.access_token })).body;
    expect((await api.get('/api/v1/org', { token: key.key })).status).toBe(200);

    expectError(await api.get(`/api/v1/keys/${key.id}`, { token: stranger.access_token }), 404, 'not_found');
    expectError(await api.delete(`/api/v1/keys/${key.id}`, { token: stranger.access_token }), 404, 'not_found');

    expect((await api.delete(`/api/v1/keys/${key.id}`, { token: owner.access_token })).status).toBe(204);
    await waitFor(async () => (await api.get('/api/v1/org', { token: key.key })).status === 401, { timeoutMs: 5_000, intervalMs: 20 });
    expectError(await api.get('/api/v1/org', { token: key.key }), 401, 'unauthorized');
    expectError(await api.delete(`/api/v1/keys/${key.id}`, { token: owner.access_token }), 404, 'not_found');
  });

  it('cannot manage keys with a key, and binds a key to its environment', async () => {
    const owner = await signup();
    const key = (await api.post('/api/v1/keys', { name: 'k' }, { token: owner.access_token })).body;
    expectError(await api.post('/api/v1/keys', { name: 'k2' }, { token: key.key }), 403, 'forbidden');
    expectError(await api.get('/api/v1/user/me', { token: key.key }), 403, 'forbidden');
    const foreignEnv = (await signup()).organization.default_env_id;
    expectError(await api.get('/api/v1/org', { token: key.key, headers: { 'x-env-id': foreignEnv } }), 403, 'forbidden');
    expectError(await api.get('/api/v1/org', { token: owner.access_token, headers: { 'x-env-id': foreignEnv } }), 404, 'not_found');
    expectError(await api.post('/api/v1/keys', { name: 'k3', env_id: foreignEnv }, { token: owner.access_token }), 404, 'not_found');
    expectError(await api.get('/api/v1/org', { token: key.key, headers: { 'x-env-id': 'production' } }), 400, 'invalid_request');
    expect((await api.get('/api/v1/org', { token: key.key, headers: { 'x-env-id': key.env_id } })).status).toBe(200);
  });

  it('honours Idempotency-Key: same body replays, other body conflicts', async () => {
    const owner = await signup();
    const headers = { 'idempotency-key': 'create-key-1' };
    const first = await api.post('/api/v1/keys', { name: 'idem' }, { token: owner.access_token, headers });
    const again = await api.post('/api/v1/keys', { name: 'idem' }, { token: owner.access_token, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The answer kept for replays holds the key itself: sealed in the bucket, not in plain text.
    expect(await idempotencyBucketText()).not.toContain(first.body.key);
    expectError(await api.post('/api/v1/keys', { name: 'other' }, { token: owner.access_token, headers }), 409, 'idempotency_conflict');
    const list = await api.get('/api/v1/keys', { token: owner.access_token });
    expect(list.body.data.filter((k: { name: string }) => k.name === 'idem')).toHaveLength(1);
    // Keys are per principal: another account may use the same key string.
    const other = await signup();
    expect((await api.post('/api/v1/keys', { name: 'idem' }, { token: other.access_token, headers })).body.id).not.toBe(first.body.id);
  });
});

describe('the HTTP edge', () => {
  it('answers malformed JSON, unknown routes, wrong methods and large bodies in the error shape', async () => {
    expectError(await api.post('/api/v1/auth/signup', undefined, { raw: '{"email":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectError(await api.get('/api/v1/nothing-here'), 404, 'route_not_found');
    expectError(await api.get('/'), 404, 'route_not_found');
    const wrong = await api.delete('/api/v1/org');
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET, PATCH');
    const big = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2 * 1024 * 1024) });
    expectError(await api.post('/api/v1/auth/signup', undefined, { raw: big, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
    expectError(await api.post('/api/v1/auth/signup', undefined, { raw: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
  });

  it('refuses NUL characters (U+0000) anywhere in a request: no stored text can hold them', async () => {
    const { access_token } = await signup();
    const nul = (res: { status: number; body: any; headers: Headers }, path: string) => {
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toEqual([{ path, message: 'must not contain NUL characters (U+0000)' }]);
    };
    nul(await api.post('/api/v1/auth/signup', { email: 'nul@example.com', password: 'correct horse battery', name: 'A\u0000da' }), 'body.name');
    nul(await api.post('/api/v1/keys', { name: 'agent\u0000' }, { token: access_token }), 'body.name');
    nul(await api.get('/api/v1/keys?limit=2&page_token=a%00b', { token: access_token }), 'query.page_token');
    nul(await api.get('/api/v1/inboxes/inb_%00', { token: access_token }), 'path.id');
  });

  it('asks for a credential where one is needed', async () => {
    expectError(await api.get('/api/v1/org'), 401, 'unauthorized');
    expectError(await api.get('/api/v1/org', { headers: { authorization: 'Basic YTpi' } }), 401, 'unauthorized');
    expectError(await api.get('/api/v1/org', { token: 'mr_doesnotexist' }), 401, 'unauthorized');
    expectError(await api.get('/api/v1/org', { token: `mr_${'A'.repeat(43)}` }), 401, 'unauthorized');
  });

  it('keeps the caller request id, and asks for an admin key on admin routes and their aliases', async () => {
    const res = await api.get('/api/v1/nothing', { headers: { 'x-request-id': 'my-trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('my-trace-123');
    expect(res.body.error.request_id).toBe('my-trace-123');
    // With an admin key those not built yet answer 501 (admin-keys.int.spec.ts walks them).
    expectError(await api.get('/admin/health'), 401, 'unauthorized');
    expectError(await api.get('/api/v1/admin/health/history'), 401, 'unauthorized');
    expectError(await api.patch('/admin/alerts/disk', {}), 401, 'unauthorized');
  });

  it('serves an OpenAPI 3.1 document of every route', async () => {
    const doc = await api.get('/api/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/v1/auth/signup', '/api/v1/keys/{id}', '/api/v1/org', '/admin/health']));
    expect(doc.body.paths['/api/v1/auth/signup'].post.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);
    expect(doc.body.paths['/api/v1/keys'].get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query' })]));
  });
});
