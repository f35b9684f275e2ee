/**
 * Admin keys through the command and HTTP (issue 28, part 1): the first key from
 * `cli.js create-key` (no default key exists), then created, listed, read and revoked over the
 * API; a revoked key refused; tenant credentials refused on admin routes and an admin key
 * refused on every other route (the route table walked); bad input in the error shape.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { routeAccess } from '@mailroom/contracts';
import { ROUTES } from '@mailroom/gateway';
import { waitFor } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'services', 'admin', 'dist', 'cli.js');
const { anon: api, tenant, env } = usePlatform({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });

/** The command as an operator runs it, against the run's database; its standard output. */
async function createKey(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await run(process.execPath, [CLI, 'create-key', ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
    return { stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
  }
}

let first: string;

beforeAll(async () => {
  const made = await createKey('--name', 'first operator');
  expect(made.code).toBe(0);
  first = made.stdout.trim();
});

describe('admin keys', () => {
  it('come first from the command, printed once, and then from the API', async () => {
    expect(first).toMatch(/^mra_[0-9A-Za-z]{43}$/);
    const listed = await api.get('/api/v1/admin/keys', { token: first });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ name: 'first operator', key_prefix: first.slice(0, 8), created_by: null, revoked_at: null, last_used_at: expect.any(String) })]);
    expect(listed.text).not.toContain(first);

    const made = await api.post('/api/v1/admin/keys', { name: 'on-call', expires_at: '2099-01-01T00:00:00.000Z' }, { token: first });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'on-call', expires_at: '2099-01-01T00:00:00.000Z', created_by: listed.body.data[0].id, key: expect.stringMatching(/^mra_/) });
    const got = await api.get(`/api/v1/admin/keys/${made.body.id}`, { token: made.body.key });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('key');
  });

  it('stop working once revoked, everywhere within a second', async () => {
    const made = (await api.post('/api/v1/admin/keys', { name: 'short-lived' }, { token: first })).body;
    expect((await api.get('/api/v1/admin/keys', { token: made.key })).status).toBe(200);
    expect((await api.delete(`/api/v1/admin/keys/${made.id}`, { token: first })).status).toBe(204);
    await waitFor(async () => (await api.get('/api/v1/admin/keys', { token: made.key })).status === 401, { timeoutMs: 5_000, what: 'the revoked key to be refused' });
    const refused = await api.get('/api/v1/admin/keys', { token: made.key });
    expect(refused.body.error).toMatchObject({ code: 'unauthorized', message: 'admin key is invalid, revoked or expired' });
    expect((await api.get(`/api/v1/admin/keys/${made.id}`, { token: first })).body.revoked_at).toEqual(expect.any(String));
    // Again: nothing changes.
    expect((await api.delete(`/api/v1/admin/keys/${made.id}`, { token: first })).status).toBe(204);
  });

  it('answer bad input and unknown ids in the error shape', async () => {
    const cases: [string, string, unknown, number][] = [
      ['POST', '/api/v1/admin/keys', {}, 400],
      ['POST', '/api/v1/admin/keys', { name: 'x', expires_at: '2020-01-01T00:00:00.000Z' }, 400],
      ['POST', '/api/v1/admin/keys', { name: 'x', expires_at: 'tomorrow' }, 400],
      ['POST', '/api/v1/admin/keys', { name: 'x', role: 'god' }, 400],
      ['GET', '/api/v1/admin/keys/adk_01jzzzzzzzzzzzzzzzzzzzzzzz', undefined, 404],
      ['GET', '/api/v1/admin/keys/nope', undefined, 400],
      ['DELETE', '/api/v1/admin/keys/adk_01jzzzzzzzzzzzzzzzzzzzzzzz', undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await api.request(method, path, body, { token: first });
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(res.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
    }
    expect((await api.get('/api/v1/admin/keys')).status).toBe(401);
    expect((await api.get('/api/v1/admin/keys', { token: `mra_${'x'.repeat(43)}` })).status).toBe(401);
    expect((await createKey()).code).toBe(2);
    expect((await createKey('--name', 'x', '--expires-at', 'soon')).code).toBe(2);
  });
});

describe("an operator's upgrade decisions", () => {
  it('lists pending requests across organizations and approves one: the organization is on the plan at once', async () => {
    const asked = await api.post('/api/v1/org/upgrade-request', { plan: 'pro', message: 'we need 50 inboxes' }, { token: tenant.accessToken });
    expect(asked.status).toBe(201);
    const pending = await api.get(`/api/v1/admin/upgrade-requests?status=pending&org_id=${tenant.org_id}`, { token: first });
    expect(pending.status).toBe(200);
    expect(pending.body.data).toEqual([expect.objectContaining({ id: asked.body.id, status: 'pending', plan: 'pro' })]);

    const approved = await api.post(`/api/v1/admin/upgrade-requests/${asked.body.id}/decision`, { decision: 'approve', note: 'welcome to pro' }, { token: first });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: asked.body.id, status: 'approved', decision_note: 'welcome to pro' });
    expect((await api.get('/api/v1/org', { token: tenant.key })).body.plan).toBe('pro');
    expect((await api.get(`/api/v1/admin/upgrade-requests?status=pending&org_id=${tenant.org_id}`, { token: first })).body.data).toEqual([]);

    const again = await api.post(`/api/v1/admin/upgrade-requests/${asked.body.id}/decision`, { decision: 'decline' }, { token: first });
    expect(again.status).toBe(409);
    for (const [path, body, status] of [
      [`/api/v1/admin/upgrade-requests/${asked.body.id}/decision`, { decision: 'maybe' }, 400],
      [`/api/v1/admin/upgrade-requests/upr_01jzzzzzzzzzzzzzzzzzzzzzzz/decision`, { decision: 'approve' }, 404],
    ] as const) {
      expect((await api.post(path, body, { token: first })).status).toBe(status);
    }
    expect((await api.get('/api/v1/admin/upgrade-requests?status=bogus', { token: first })).status).toBe(400);
    expect((await api.post(`/api/v1/admin/upgrade-requests/${asked.body.id}/decision`, { decision: 'approve' }, { token: tenant.accessToken })).status).toBe(403);
  });
});

describe('admin keys and tenant credentials keep apart', () => {
  it('refuses a tenant API key and access token on admin routes', async () => {
    for (const token of [tenant.key, tenant.accessToken]) {
      const res = await api.get('/api/v1/admin/keys', { token });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('admin operations take an admin key');
    }
  });

  it('refuses an admin key on every route of the table that is not an admin route', async () => {
    const mismatches: string[] = [];
    for (const route of ROUTES) {
      const access = routeAccess(route.method, route.path);
      const path = route.path.replace(/\{[a-zA-Z_]+\}/g, 'x');
      const res = await api.request(route.method.toUpperCase(), `${path}?permission_probe=1`, undefined, { token: first });
      // Admin routes: past authentication (400 for the probe, 501 where not built yet). Public ones
      // ignore credentials (a download link's own 403 is about the link). Every other route: 403.
      const publicOk = (res.status !== 403 || res.body?.error?.code === 'invalid_link') && res.status < 500;
      const ok = access === 'admin' ? res.status === 400 || res.status === 501 : access === 'public' ? publicOk : res.status === 403;
      if (!ok) mismatches.push(`${route.method.toUpperCase()} ${route.path}: ${res.status} ${res.text.slice(0, 160)}`);
    }
    expect(mismatches).toEqual([]);
  });
});
