import { AppError } from './errors';
import { authorize, can, requireService, tenantOf, tenantScope } from './permissions';
import type { AuthContext, Role } from './auth-context';

const user = (role: Role): AuthContext => ({ kind: 'user', user_id: 'usr_1', session_id: 'ses_1', org_id: 'org_1', env_id: 'env_1', role });
const key: AuthContext = { kind: 'api_key', key_id: 'key_1', org_id: 'org_1', env_id: 'env_1' };

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
    expect(tenantOf(key)).toBe(key);
    expect(tenantScope(user('member'))).toEqual({ org_id: 'org_1', env_id: 'env_1' });
    for (const other of [{ kind: 'anonymous' }, { kind: 'admin', admin_key_id: 'adk_1' }, { kind: 'service', service: 'mailbox' }] as AuthContext[]) {
      expect(refusal(() => tenantOf(other))?.code).toBe('unauthorized');
      expect(refusal(() => authorize(other, 'apiKeys.read'))?.code).toBe('unauthorized');
    }
  });

  it('gives each role what the table says', () => {
    expect(can(tenantOf(user('owner')), 'apiKeys.write')).toBe(true);
    expect(authorize(user('admin'), 'organization.update')).toMatchObject({ role: 'admin' });
    expect(authorize(user('member'), 'apiKeys.read')).toMatchObject({ role: 'member' });
    const member = refusal(() => authorize(user('member'), 'apiKeys.write'));
    expect(member).toMatchObject({ code: 'forbidden', status: 403 });
    expect(member?.message).toMatch(/owner or admin.*your role is member/);
  });

  it('refuses API keys what people do, saying to use a user token', () => {
    for (const p of ['apiKeys.read', 'apiKeys.write', 'organization.update'] as const) {
      const err = refusal(() => authorize(key, p));
      expect(err).toMatchObject({ code: 'forbidden' });
      expect(err?.message).toMatch(/API key cannot .*user access token/);
    }
  });

  it('keeps internal operations to services', () => {
    expect(requireService({ kind: 'service', service: 'gateway' })).toMatchObject({ service: 'gateway' });
    expect(refusal(() => requireService(user('owner')))?.code).toBe('forbidden');
    expect(refusal(() => requireService(key))?.code).toBe('forbidden');
  });
});
