/**
 * The operator's users and audit log through HTTP (issue 28, part 5): an account found by its
 * address, suspended (its session refused within a second, its API key stopped, every sign-in
 * refused) and lifted; the audit log holding the admin actions and the tenants'
 * security-relevant ones, filtered and paged; a tenant credential refused on every admin route
 * of the table (aliases included).
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
const { anon: api, tenant, env, signUp } = usePlatform({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });

let admin: string;

beforeAll(async () => {
  const { stdout } = await run(process.execPath, [CLI, 'create-key', '--name', 'auditor'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  admin = stdout.trim();
});

/** The audit log's entries for a query, once `ready` holds of them (entries of other services arrive through the bus). */
async function auditLog(query: string, ready: (entries: Record<string, any>[]) => boolean): Promise<Record<string, any>[]> {
  let entries: Record<string, any>[] = [];
  await waitFor(
    async () => {
      const res = await api.get(`/api/v1/admin/audit-log?${query}`, { token: admin });
      expect(res.status).toBe(200);
      entries = res.body.data;
      return ready(entries);
    },
    { timeoutMs: 10_000, what: `the audit log (${query}) to hold what was done` },
  );
  return entries;
}

describe("an operator's users", () => {
  it('suspends an account: its session and key stop within a second and no sign-in opens one; lifting it lets key and password work again', async () => {
    const bob = await signUp();
    const found = await api.get(`/api/v1/admin/users?email=${encodeURIComponent(bob.email.toUpperCase())}`, { token: admin });
    expect(found.status).toBe(200);
    expect(found.body.data).toEqual([expect.objectContaining({ email: bob.email, suspended_at: null, deleted_at: null, organizations: [expect.objectContaining({ org_id: bob.org_id, role: 'owner' })] })]);
    const id: string = found.body.data[0].id;
    expect((await api.get(`/api/v1/admin/users/${id}`, { token: admin })).body).toEqual(found.body.data[0]);

    const suspended = await api.post(`/api/v1/admin/users/${id}/suspend`, { reason: 'abuse report #42' }, { token: admin });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ id, suspended_at: expect.any(String), suspension_reason: 'abuse report #42' });
    await waitFor(async () => (await api.get('/api/v1/user/me', { token: bob.accessToken })).status === 401, { timeoutMs: 5_000, what: 'the session to be refused' });
    await waitFor(async () => (await api.get('/api/v1/inboxes', { token: bob.key })).status === 401, { timeoutMs: 5_000, what: 'the API key to be refused' });
    const login = await api.post('/api/v1/auth/login', { email: bob.email, password: bob.password });
    expect(login.status).toBe(403);
    expect(login.body.error).toMatchObject({ code: 'account_suspended' });
    expect((await api.post('/api/v1/auth/refresh', { refresh_token: bob.refreshToken })).status).toBe(401);
    expect((await api.post(`/api/v1/admin/users/${id}/suspend`, { reason: 'again' }, { token: admin })).status).toBe(409);

    const lifted = await api.post(`/api/v1/admin/users/${id}/unsuspend`, undefined, { token: admin });
    expect(lifted.status).toBe(200);
    expect(lifted.body).toMatchObject({ suspended_at: null, suspension_reason: null });
    // A refusal is remembered by gateways for at most their key cache's second.
    await waitFor(async () => (await api.get('/api/v1/inboxes', { token: bob.key })).status === 200, { timeoutMs: 5_000, what: 'the API key to act again' });
    expect((await api.post('/api/v1/auth/login', { email: bob.email, password: bob.password })).status).toBe(200);
    expect((await api.post(`/api/v1/admin/users/${id}/unsuspend`, undefined, { token: admin })).status).toBe(409);

    const entries = await auditLog(`target_id=${id}`, (e) => e.length === 2);
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['user.unsuspended', { type: 'admin_key', id: expect.stringMatching(/^adk_/) }],
      ['user.suspended', { type: 'admin_key', id: expect.stringMatching(/^adk_/) }],
    ]);
    expect(entries[1]).toMatchObject({ org_id: null, details: { email: bob.email, reason: 'abuse report #42' }, request_id: expect.any(String) });
  });

  it('answers bad input in the error shape', async () => {
    const cases: [string, string, unknown, number][] = [
      ['GET', '/api/v1/admin/users', undefined, 400],
      ['GET', '/api/v1/admin/users?email=not-an-address', undefined, 400],
      ['GET', '/api/v1/admin/users?email=a@example.com&id=usr_01jzzzzzzzzzzzzzzzzzzzzzzz', undefined, 400],
      ['GET', '/api/v1/admin/users/usr_01jzzzzzzzzzzzzzzzzzzzzzzz', undefined, 404],
      ['POST', '/api/v1/admin/users/usr_01jzzzzzzzzzzzzzzzzzzzzzzz/suspend', { reason: 'x' }, 404],
      ['POST', `/api/v1/admin/users/usr_01jzzzzzzzzzzzzzzzzzzzzzzz/suspend`, {}, 400],
      ['POST', `/api/v1/admin/users/usr_01jzzzzzzzzzzzzzzzzzzzzzzz/suspend`, { reason: '   ' }, 400],
      ['GET', '/api/v1/admin/audit-log?action=bogus', undefined, 400],
      ['GET', '/api/v1/admin/audit-log?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', undefined, 400],
      ['GET', '/api/v1/admin/audit-log?from=yesterday', undefined, 400],
      ['GET', '/api/v1/admin/audit-log?org_id=nope', undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await api.request(method, path, body, { token: admin });
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(res.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
    }
  });
});

describe('the audit log', () => {
  it("holds a tenant's key, plan and domain actions and the operators' own, newest first, filtered and paged", async () => {
    const made = await api.post('/api/v1/keys', { name: 'ci' }, { token: tenant.accessToken });
    expect(made.status).toBe(201);
    expect((await api.delete(`/api/v1/keys/${made.body.id}`, { token: tenant.accessToken })).status).toBe(204);
    const asked = await api.post('/api/v1/org/upgrade-request', { plan: 'pro' }, { token: tenant.accessToken });
    expect((await api.post(`/api/v1/admin/upgrade-requests/${asked.body.id}/decision`, { decision: 'decline', note: 'not yet' }, { token: admin })).status).toBe(200);
    const domain = await api.post('/api/v1/domains', { domain_name: 'audited.example.org' }, { token: tenant.key });
    expect(domain.status).toBe(201);
    expect((await api.delete(`/api/v1/domains/${domain.body.domain_id}`, { token: tenant.key })).status).toBe(204);

    const entries = await auditLog(`org_id=${tenant.org_id}`, (e) => ['domain.deleted', 'upgrade_request.declined', 'api_key.revoked'].every((a) => e.some((x) => x.action === a)));
    expect(entries.map((e) => e.action)).toEqual(['domain.deleted', 'upgrade_request.declined', 'api_key.revoked', 'api_key.created', 'api_key.created']);
    const [deleted, declined, revoked, created] = entries;
    expect(deleted).toMatchObject({ actor: { type: 'api_key' }, target: { type: 'domain', id: domain.body.domain_id }, details: { name: 'audited.example.org' } });
    expect(declined).toMatchObject({ actor: { type: 'admin_key' }, target: { type: 'upgrade_request', id: asked.body.id }, details: { plan: 'pro', note: 'not yet' } });
    expect(revoked).toMatchObject({ actor: { type: 'user' }, target: { type: 'api_key', id: made.body.id } });
    expect(created).toMatchObject({ target: { type: 'api_key', id: made.body.id }, details: { name: 'ci' } });
    expect(JSON.stringify(entries)).not.toContain(made.body.key);

    const first = await api.get(`/api/v1/admin/audit-log?org_id=${tenant.org_id}&limit=2`, { token: admin });
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(entries.slice(0, 2).map((e) => e.id));
    const second = await api.get(`/api/v1/admin/audit-log?org_id=${tenant.org_id}&limit=2&page_token=${first.body.next_page_token}`, { token: admin });
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual(entries.slice(2, 4).map((e) => e.id));
    expect((await api.get(`/api/v1/admin/audit-log?action=api_key.revoked&org_id=${tenant.org_id}`, { token: admin })).body.data).toHaveLength(1);

    const ours = await auditLog('action=admin_key.created', (e) => e.length > 0);
    expect(ours.at(-1)).toMatchObject({ actor: { type: 'command', id: null }, org_id: null, details: { name: 'auditor' } });
    const future = await api.get(`/api/v1/admin/audit-log?from=2099-01-01T00:00:00Z`, { token: admin });
    expect(future.body).toEqual({ data: [], next_page_token: null });
  });
});

describe('tenant credentials', () => {
  it('are refused on every admin route of the table, aliases included', async () => {
    const admitted: string[] = [];
    for (const route of ROUTES) {
      if (routeAccess(route.method, route.path) !== 'admin') continue;
      for (const path of [route.path, ...(route.aliases ?? [])]) {
        for (const token of [tenant.key, tenant.accessToken]) {
          const res = await api.request(route.method.toUpperCase(), path.replace(/\{[a-zA-Z_]+\}/g, 'x'), undefined, { token });
          if (res.status !== 403 || res.body.error?.code !== 'forbidden') admitted.push(`${route.method.toUpperCase()} ${path}: ${res.status}`);
        }
      }
    }
    expect(admitted).toEqual([]);
  });
});
