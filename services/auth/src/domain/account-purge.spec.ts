/** The purge without a database: the 30-day boundary on both sides, what goes with an account, failures left for the next run. */
import type { UserPurged } from '@mailroom/contracts';
import { MemoryAccounts } from '../../test/memory-accounts';
import { clockAt, memoryTransact } from '../../test/memory-credentials';
import { AccountPurge } from './account-purge';

const DAY = 86_400_000;
const deletedAt = new Date('2026-10-01T12:00:00.000Z');
const purged = (organizations_deleted: string[] = []): UserPurged => ({ memberships_removed: organizations_deleted.length, organizations_deleted, ownership_passed: [] });

function setup() {
  const clock = clockAt();
  const store = new MemoryAccounts();
  for (const [id, email] of [['usr_ada', 'ada@example.com'], ['usr_bob', 'bob@example.com'], ['usr_cleo', 'cleo@example.com']] as const) store.addUser(id, email);
  store.users.get('usr_ada')!.deleted_at = deletedAt;
  store.users.get('usr_bob')!.deleted_at = new Date(deletedAt.getTime() + DAY);
  store.addSession('ses_ada', 'usr_ada');
  store.recoveryTokens.push({ token_hash: Buffer.from('t'), user_id: 'usr_ada', created_at: deletedAt, expires_at: deletedAt, used_at: null });
  store.keys.push({ id: 'key_ada', org_id: 'org_team', created_by: 'usr_ada', revoked_at: null }, { id: 'key_cleo', org_id: 'org_team', created_by: 'usr_cleo', revoked_at: null });
  const asked: string[] = [];
  const orgs = { down: false, purgeUser: async (userId: string) => (orgs.down ? Promise.reject(new Error('no responders')) : (asked.push(userId), purged(userId === 'usr_ada' ? ['org_ada'] : []))) };
  const announced: string[] = [];
  const errors: string[] = [];
  const purge = new AccountPurge(memoryTransact, store, store, orgs, { apiKeyRevoked: async (f) => void announced.push(f.key_id) }, clock, (_err, id) => void errors.push(id));
  return { clock, store, orgs, asked, announced, errors, purge };
}

describe('AccountPurge', () => {
  it('leaves an account a millisecond short of 30 days, and purges it at 30 days with what it owned', async () => {
    const { purge, store, asked, announced } = setup();
    expect(await purge.purge(new Date(deletedAt.getTime() + 30 * DAY - 1))).toEqual({ accounts: 0, organizations_deleted: 0, failed: 0 });
    expect(store.users.has('usr_ada')).toBe(true);
    expect(asked).toEqual([]);

    expect(await purge.purge(new Date(deletedAt.getTime() + 30 * DAY))).toEqual({ accounts: 1, organizations_deleted: 1, failed: 0 });
    expect(asked).toEqual(['usr_ada']);
    expect(store.users.has('usr_ada')).toBe(false);
    expect([...store.sessions.keys()]).toEqual([]);
    expect(store.recoveryTokens).toEqual([]);
    expect(store.keys.map((k) => [k.id, k.revoked_at !== null])).toEqual([
      ['key_ada', true],
      ['key_cleo', false],
    ]);
    expect(announced).toEqual(['key_ada']);
    // Bob, deleted a day later, and Cleo, live, stay; a second run changes nothing.
    expect([...store.users.keys()].sort()).toEqual(['usr_bob', 'usr_cleo']);
    expect(await purge.purge(new Date(deletedAt.getTime() + 30 * DAY))).toEqual({ accounts: 0, organizations_deleted: 0, failed: 0 });
  });

  it('counts an account orgs could not purge, keeps it whole for the next run, and goes on with the others', async () => {
    const { purge, store, orgs, errors } = setup();
    orgs.down = true;
    const later = new Date(deletedAt.getTime() + 40 * DAY);
    expect(await purge.purge(later)).toEqual({ accounts: 0, organizations_deleted: 0, failed: 2 });
    expect(errors).toEqual(['usr_ada', 'usr_bob']);
    expect(store.users.has('usr_ada')).toBe(true);
    expect(store.keys.every((k) => k.revoked_at === null)).toBe(true);
    orgs.down = false;
    expect(await purge.purge(later)).toEqual({ accounts: 2, organizations_deleted: 1, failed: 0 });
  });

  it('keeps an account recovered between orgs\' answer and its deletion here (the keys\' revocation rolls back with it, in the database)', async () => {
    const { purge, store } = setup();
    const purgeRow = store.purge.bind(store);
    store.purge = async (id, by) => {
      store.users.get(id)!.deleted_at = null;
      return purgeRow(id, by);
    };
    expect(await purge.purge(new Date(deletedAt.getTime() + 30 * DAY))).toEqual({ accounts: 0, organizations_deleted: 0, failed: 0 });
    expect(store.users.get('usr_ada')!.deleted_at).toBeNull();
  });
});
