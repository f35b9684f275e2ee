import { AppError } from './errors';
import {
  authorize,
  can,
  KEY_PERMISSIONS,
  KEY_SCOPES,
  keyPermissions,
  keyPermissionList,
  PERMISSION_NAMES,
  requireAdmin,
  requireService,
  ROLE_PERMISSIONS,
  ROLES,
  ROUTE_ACCESS,
  routeAccess,
  tenantOf,
  tenantScope,
  userOf,
  type Permission,
  type Role,
} from './permissions';
import type { AuthContext } from './auth-context';

const user = (role: Role): AuthContext => ({ kind: 'user', user_id: 'usr_1', session_id: 'ses_1', org_id: 'org_1', env_id: 'env_1', role });
const key = (permissions: Permission[] = [...KEY_SCOPES.full]): AuthContext => ({ kind: 'api_key', key_id: 'key_1', org_id: 'org_1', env_id: 'env_1', permissions });

function refusal(fn: () => unknown): AppError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

describe('permissions', () => {
  it('takes a user or an API key as a tenant, and nothing else', () => {
    expect(tenantOf(key())).toEqual(key());
    expect(tenantScope(user('member'))).toEqual({ org_id: 'org_1', env_id: 'env_1' });
    for (const other of [{ kind: 'anonymous' }, { kind: 'admin', admin_key_id: 'adk_1' }, { kind: 'service', service: 'mailbox' }] as AuthContext[]) {
      expect(refusal(() => tenantOf(other))?.code).toBe('unauthorized');
      expect(refusal(() => authorize(other, 'keys.read'))?.code).toBe('unauthorized');
    }
    expect(refusal(() => userOf(key()))?.code).toBe('forbidden');
  });

  it('orders the roles: each holds what the one below it holds, and more', () => {
    const [owner, admin, member, viewer] = ROLES.map((r) => new Set(ROLE_PERMISSIONS[r]));
    expect([...viewer!].every((p) => member!.has(p))).toBe(true);
    expect([...member!].every((p) => admin!.has(p))).toBe(true);
    expect([...admin!].every((p) => owner!.has(p))).toBe(true);
    expect(member!.size).toBeGreaterThan(viewer!.size);
    expect(admin!.size).toBeGreaterThan(member!.size);
    // Every permission is held by someone.
    expect(PERMISSION_NAMES.filter((p) => !owner!.has(p))).toEqual([]);
  });

  it('gives each role what the table says, and names the roles that hold a refused permission', () => {
    expect(can(tenantOf(user('owner')), 'keys.manage')).toBe(true);
    expect(authorize(user('admin'), 'org.manage')).toMatchObject({ role: 'admin' });
    expect(authorize(user('viewer'), 'mail.read')).toMatchObject({ role: 'viewer' });
    expect(refusal(() => authorize(user('viewer'), 'mail.send'))?.message).toMatch(/owner or admin or member.*your role is viewer/);
    const member = refusal(() => authorize(user('member'), 'keys.manage'));
    expect(member).toMatchObject({ code: 'forbidden', status: 403 });
    expect(member?.message).toMatch(/owner or admin .*your role is member/);
  });

  it('gives a key no more than a member holds, and never power over people or keys', () => {
    expect(KEY_PERMISSIONS.every((p) => ROLE_PERMISSIONS.member.includes(p))).toBe(true);
    expect(KEY_PERMISSIONS.filter((p) => /^(members|keys|environments)\./.test(p))).toEqual([]);
    expect(KEY_SCOPES.read_only.every((p) => p.endsWith('.read'))).toBe(true);
    expect(KEY_SCOPES.send_only).toEqual(['mail.send']);
    for (const p of ['keys.read', 'keys.manage', 'org.manage', 'members.manage'] as const) {
      expect(refusal(() => authorize(key(), p))?.message).toMatch(/API key cannot .*user access token/);
    }
    expect(refusal(() => authorize(key([...KEY_SCOPES.read_only]), 'mail.send'))?.message).toMatch(/does not hold mail.send/);
    expect(authorize(key(['mail.send']), 'mail.send')).toMatchObject({ kind: 'api_key' });
  });

  it('reads a key permission list (deduplicated) and refuses unknown permissions and those of people', () => {
    expect(keyPermissionList.parse(['mail.send', 'mail.read'])).toEqual(['mail.send', 'mail.read']);
    expect(keyPermissions('custom', ['mail.send', 'mail.read', 'mail.send'])).toEqual(['mail.read', 'mail.send']);
    expect(keyPermissions('full', null)).toEqual(KEY_PERMISSIONS);
    const unknown = keyPermissionList.safeParse(['mail.fly']);
    expect(unknown.success).toBe(false);
    expect(unknown.error?.issues[0]?.message).toMatch(/unknown permission "mail.fly"/);
    expect(keyPermissionList.safeParse(['keys.manage']).error?.issues[0]?.message).toMatch(/cannot hold keys.manage/);
    expect(keyPermissionList.safeParse([]).success).toBe(false);
  });

  it('names what each route needs, by method and path', () => {
    expect(routeAccess('post', '/api/v1/keys')).toBe('keys.manage');
    expect(routeAccess('GET', '/api/v1/org')).toBe('org.read');
    expect(routeAccess('GET', '/api/v1/nowhere')).toBeUndefined();
    expect(routeAccess('GET', 'constructor')).toBeUndefined();
    // Every permission guards a route.
    const used = new Set<string>(Object.values(ROUTE_ACCESS));
    expect(PERMISSION_NAMES.filter((p) => !used.has(p))).toEqual([]);
  });

  it('keeps internal operations to services', () => {
    expect(requireService({ kind: 'service', service: 'gateway' })).toMatchObject({ service: 'gateway' });
    expect(refusal(() => requireService(user('owner')))?.code).toBe('forbidden');
    expect(refusal(() => requireService(key()))?.code).toBe('forbidden');
  });

  it('keeps operators\' operations to admin contexts', () => {
    expect(requireAdmin({ kind: 'admin', admin_key_id: 'adk_1' })).toMatchObject({ admin_key_id: 'adk_1' });
    for (const ctx of [user('owner'), key(), { kind: 'service', service: 'gateway' } as const, { kind: 'anonymous' } as const]) {
      expect(refusal(() => requireAdmin(ctx))).toMatchObject({ code: 'forbidden', message: 'this operation needs an admin key' });
    }
  });
});
