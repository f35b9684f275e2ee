/**
 * Operators suspending an account and lifting it, without a database: sessions ended with a
 * fact each, keys announced, both audited with the admin key, 409s for a second suspension or
 * lifting what is not suspended, admin keys only.
 */
import type { AuditedCall, Membership } from '@mailroom/contracts';
import { refusalOf } from '@mailroom/testing';
import { MemoryAccounts } from '../../test/memory-accounts';
import { clockAt, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import type { UserSuspensionRow } from '../repo/user-suspension.repository';
import { UserSuspensions } from './user-suspensions';

class MemorySuspensions {
  readonly rows = new Map<string, UserSuspensionRow>();
  async find(userId: string) {
    return this.rows.get(userId);
  }
  async insert(row: UserSuspensionRow) {
    if (this.rows.has(row.user_id)) return false;
    this.rows.set(row.user_id, row);
    return true;
  }
  async suspendedAtLocked(userId: string) {
    return this.rows.get(userId)?.suspended_at ?? null;
  }
  async lockAccount() {}
  async delete(userId: string) {
    const row = this.rows.get(userId);
    this.rows.delete(userId);
    return row;
  }
}

const operator: AuditedCall = { auth: { kind: 'admin', admin_key_id: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz' }, requestId: 'req_op', client: { ip: '192.0.2.1' } };

function setup() {
  const clock = clockAt();
  const store = new MemoryAccounts();
  store.addUser('usr_ada', 'ada@example.com', 'hash:pw');
  for (const id of ['ses_laptop', 'ses_phone']) store.addSession(id, 'usr_ada');
  store.addSession('ses_bob', 'usr_bob');
  store.keys.push({ id: 'key_1', org_id: 'org_1', created_by: 'usr_ada', revoked_at: null }, { id: 'key_2', org_id: 'org_1', created_by: 'usr_bob', revoked_at: null });
  const outbox = new MemoryOutbox();
  const suspensions = new MemorySuspensions();
  const announced: string[] = [];
  const memberships: Membership[] = [{ org_id: 'org_1', org_name: 'Acme', role: 'admin', default_env_id: 'env_1' }];
  const users = new UserSuspensions({
    transact: memoryTransact,
    accounts: store,
    suspensions,
    credentials: store,
    keys: store,
    orgs: { memberships: async () => memberships },
    outbox,
    revocations: { apiKeyRevoked: async (f) => void announced.push(f.key_id) },
    clock,
    accessTokenTtlSeconds: 900,
  });
  return { clock, store, outbox, suspensions, announced, users };
}

describe('suspending an account', () => {
  it('ends its sessions (a fact each), drops its keys from gateways, and says so in the account and the audit log', async () => {
    const { store, outbox, announced, users } = setup();
    const shown = await users.suspend(operator, 'usr_ada', 'phishing reports');
    expect(shown).toMatchObject({ id: 'usr_ada', suspended_at: expect.any(String), suspension_reason: 'phishing reports', organizations: [{ org_id: 'org_1', org_name: 'Acme', role: 'admin' }] });
    expect(await users.isSuspended('usr_ada')).toBe(true);
    expect(outbox.facts.map((f) => f.session_id).sort()).toEqual(['ses_laptop', 'ses_phone']);
    expect(store.sessions.get('ses_bob')?.revoked_at).toBeNull();
    expect(announced).toEqual(['key_1']);
    expect(outbox.audited).toEqual([
      expect.objectContaining({ action: 'user.suspended', actor: { type: 'admin_key', id: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz' }, org_id: null, target: { type: 'user', id: 'usr_ada' }, details: { email: 'ada@example.com', reason: 'phishing reports' }, request_id: 'req_op', ip: '192.0.2.1' }),
    ]);
    expect(await refusalOf(users.suspend(operator, 'usr_ada', 'again'))).toMatchObject({ code: 'conflict' });
    expect(outbox.audited).toHaveLength(1);
  });

  it('is lifted once, audited; lifting what is not suspended is a conflict', async () => {
    const { outbox, users } = setup();
    await users.suspend(operator, 'usr_ada', 'spam');
    expect(await users.unsuspend(operator, 'usr_ada')).toMatchObject({ suspended_at: null, suspension_reason: null });
    expect(await users.isSuspended('usr_ada')).toBe(false);
    expect(outbox.audited.map((e) => e.action)).toEqual(['user.suspended', 'user.unsuspended']);
    expect(await refusalOf(users.unsuspend(operator, 'usr_ada'))).toMatchObject({ code: 'conflict' });
  });

  it('finds accounts by address or id; an unknown one is not found; tenants are refused', async () => {
    const { users } = setup();
    expect((await users.search(operator, { email: 'ada@example.com' })).data.map((u) => u.id)).toEqual(['usr_ada']);
    expect((await users.search(operator, { email: 'nobody@example.com' })).data).toEqual([]);
    expect((await users.search(operator, { id: 'usr_ada' })).data).toHaveLength(1);
    expect(await refusalOf(users.get(operator, 'usr_nobody'))).toMatchObject({ code: 'not_found' });
    expect(await refusalOf(users.suspend(operator, 'usr_nobody', 'x'))).toMatchObject({ code: 'not_found' });
    const tenant: AuditedCall = { auth: { kind: 'user', user_id: 'usr_ada', session_id: 'ses_laptop', org_id: 'org_1', env_id: 'env_1', role: 'owner' } };
    expect(await refusalOf(users.suspend(tenant, 'usr_ada', 'x'))).toMatchObject({ code: 'forbidden' });
  });
});
