/**
 * The permission table, proven over HTTP: every route of the gateway's route table, asked by
 * every role and every API key scope, is refused with 403 exactly where the table
 * (libs/contracts ROUTE_ACCESS, ROLE_PERMISSIONS, KEY_SCOPES) says so.
 *
 * Each request carries an unknown query parameter. The gateway checks the table before it
 * reads the request, and refuses unknown parameters on every route, so a caller the table
 * allows gets 400 (nothing is done) and one it refuses gets 403: the walk changes nothing.
 */
import { KEY_SCOPES, ROLE_PERMISSIONS, ROLES, routeAccess, type Permission, type Role } from '@mailroom/contracts';
import { ROUTES } from '@mailroom/gateway';
import { addColleague } from './colleagues';
import { usePlatform } from './fixtures';

const { anon, tenant, env, signUp } = usePlatform({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });

interface Principal {
  name: string;
  token: string;
  /** What the principal holds; undefined for what only people may do ('self'). */
  kind: 'user' | 'api_key';
  holds: readonly Permission[];
}

const CUSTOM: Permission[] = ['webhooks.read', 'mail.send'];

async function principals(): Promise<Principal[]> {
  const out: Principal[] = [{ name: 'owner', kind: 'user', token: tenant.accessToken, holds: ROLE_PERMISSIONS.owner }];
  for (const role of ROLES.filter((r): r is Exclude<Role, 'owner'> => r !== 'owner')) {
    const colleague = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), role);
    out.push({ name: role, kind: 'user', token: colleague.token, holds: ROLE_PERMISSIONS[role] });
  }
  const keys: [string, Record<string, unknown>, readonly Permission[]][] = [
    ['key full (default)', {}, KEY_SCOPES.full],
    ['key read_only', { scope: 'read_only' }, KEY_SCOPES.read_only],
    ['key send_only', { scope: 'send_only' }, KEY_SCOPES.send_only],
    ['key custom', { permissions: CUSTOM }, CUSTOM],
  ];
  for (const [name, body, holds] of keys) {
    const created = await anon.post('/api/v1/keys', { name, ...body }, { token: tenant.accessToken });
    expect(created.status).toBe(201);
    expect(created.body.permissions).toEqual([...holds]);
    out.push({ name, kind: 'api_key', token: created.body.key, holds });
  }
  return out;
}

/** 403 where the table refuses the principal, per route and principal. */
function refused(method: string, path: string, p: Principal): boolean {
  const access = routeAccess(method, path);
  switch (access) {
    case undefined:
      throw new Error(`${method} ${path} is not in the permission table`);
    case 'public':
      return false;
    case 'self':
      return p.kind === 'api_key';
    case 'admin':
      return true;
    default:
      return !p.holds.includes(access);
  }
}

describe('the permission table, route by route', () => {
  it('refuses with 403 exactly what the table refuses, for every route, role and key scope', async () => {
    const everyone = await principals();
    const mismatches: string[] = [];
    let cases = 0;
    for (const route of ROUTES) {
      const path = route.path.replace(/\{[a-zA-Z_]+\}/g, 'x');
      for (const p of everyone) {
        const res = await anon.request(route.method.toUpperCase(), `${path}?permission_probe=1`, undefined, { token: p.token });
        cases++;
        const expected = refused(route.method, route.path, p);
        // Allowed: the request reached input checks (400 for the probe); a route without credential
        // (a provider's signed callback reads no query) answers what it answers, but never 403.
        const open = routeAccess(route.method, route.path) === 'public';
        // A signed download link's route refuses the probe's made-up link (403 invalid_link), whoever asks.
        const link = res.body?.error?.code === 'invalid_link' && route.path === '/api/v1/downloads/{token}';
        const ok = expected ? res.status === 403 && res.body?.error?.code === 'forbidden' : open ? (res.status !== 403 || link) && res.status < 500 : res.status === 400;
        if (!ok) mismatches.push(`${route.method.toUpperCase()} ${route.path} as ${p.name}: expected ${expected ? '403' : 'not 403'}, got ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    expect(mismatches).toEqual([]);
    // Every route, with 4 roles and 4 key scopes (8 callers a route).
    expect(everyone).toHaveLength(8);
    expect(cases).toBe(ROUTES.length * 8);
  });
});

describe('API key permission sets', () => {
  it('shows the scope and permissions of a key in every answer about it', async () => {
    const created = await anon.post('/api/v1/keys', { name: 'reader', scope: 'read_only' }, { token: tenant.accessToken });
    expect(created.body).toMatchObject({ scope: 'read_only', permissions: [...KEY_SCOPES.read_only] });
    const got = await anon.get(`/api/v1/keys/${created.body.id}`, { token: tenant.accessToken });
    expect(got.body).toMatchObject({ scope: 'read_only', permissions: [...KEY_SCOPES.read_only] });
    const listed = await anon.get('/api/v1/keys?limit=100', { token: tenant.accessToken });
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.id)).toMatchObject({ scope: 'read_only' });
    const full = await anon.post('/api/v1/keys', { name: 'default' }, { token: tenant.accessToken });
    expect(full.body).toMatchObject({ scope: 'full', permissions: [...KEY_SCOPES.full] });
    const custom = await anon.post('/api/v1/keys', { name: 'custom', scope: 'custom', permissions: ['mail.send', 'inboxes.read', 'mail.send'] }, { token: tenant.accessToken });
    expect(custom.body).toMatchObject({ scope: 'custom', permissions: ['inboxes.read', 'mail.send'] });
  });

  it('refuses an unknown permission, one only people hold, and a list beside a named scope, with 400 in the error shape', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ permissions: ['mail.fly'] }, /unknown permission "mail.fly"/],
      [{ permissions: ['keys.manage'] }, /cannot hold keys.manage/],
      [{ permissions: [] }, /at least one permission/],
      [{ scope: 'everything' }, /.+/],
      [{ scope: 'custom' }, /needs its list/],
      [{ scope: 'send_only', permissions: ['mail.read'] }, /scope custom/],
    ];
    for (const [body, message] of cases) {
      const res = await anon.post('/api/v1/keys', { name: 'bad', ...body }, { token: tenant.accessToken });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
      expect(res.body.error.details.map((d: { message: string }) => d.message).join(' ')).toMatch(message);
    }
  });

  it('lets a read-only key read and refuses it a send, naming what it lacks', async () => {
    const created = await anon.post('/api/v1/keys', { name: 'reader', scope: 'read_only' }, { token: tenant.accessToken });
    const reader = anon.withToken(created.body.key);
    expect((await reader.get('/api/v1/inboxes')).status).toBe(200);
    const refused = await reader.post('/api/v1/inboxes', {});
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/does not hold inboxes.write/);
  });
});
