/**
 * Deleting one's account and getting it back, without a database: the deletion (proof, the
 * owner's refusal, sessions ended, notice, keys dropped), the 30-day window on both sides,
 * the recovery token of a sign-in and the recovery itself.
 */
import type { AppError, OwnedOrganization, SessionResponse } from '@mailroom/contracts';
import { sha256 } from '@mailroom/platform';
import { refusalOf } from '@mailroom/testing';
import { MemoryAccounts } from '../../test/memory-accounts';
import { clockAt, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { AccountDeletion, ownershipRefusal, RECOVERY_WINDOW_MS, recoverBefore, signInAccount } from './account-deletion';
import { AccountRecovery, RECOVERY_TOKEN_TTL_MS } from './account-recovery';
import { IdentityProof } from './identity-proof';

const DAY = 86_400_000;

function setup() {
  const clock = clockAt();
  const store = new MemoryAccounts();
  const outbox = new MemoryOutbox();
  store.addUser('usr_ada', 'ada@example.com', 'hash:old password');
  for (const id of ['ses_here', 'ses_phone']) store.addSession(id, 'usr_ada');
  store.addSession('ses_bob', 'usr_bob');
  store.keys.push({ id: 'key_1', org_id: 'org_1', created_by: 'usr_ada', revoked_at: null }, { id: 'key_2', org_id: 'org_2', created_by: 'usr_bob', revoked_at: null });
  const passwords = { verify: async (h: string | null | undefined, p: string) => h === `hash:${p}` };
  const proof = new IdentityProof(passwords, { wait: async () => undefined, failed: async () => undefined }, clock);
  const orgs = { owned: [] as OwnedOrganization[] };
  const announced: string[] = [];
  const revocations = { apiKeyRevoked: async (f: { key_id: string }) => void announced.push(f.key_id) };
  const deletion = new AccountDeletion(memoryTransact, store, store, store, store, proof, { owned: async () => orgs.owned }, outbox, revocations, clock, { accessTokenTtlSeconds: 900 });
  const opened: string[] = [];
  const start = { open: async (user: { id: string }) => (opened.push(user.id), { user: { id: user.id } } as unknown as SessionResponse) };
  const recovery = new AccountRecovery(memoryTransact, store, start, outbox, clock);
  const me = { user_id: 'usr_ada', session_id: 'ses_here' };
  return { clock, store, outbox, orgs, announced, deletion, recovery, opened, me };
}

/** The recovery token and window of an account_deleted refusal. */
function detailsOf(err: AppError): { recovery_token: string; recover_before: string } {
  const get = (path: string) => err.details?.find((d) => d.path === path)?.message ?? '';
  return { recovery_token: get('recovery_token'), recover_before: get('recover_before') };
}

describe('deleting one\'s account', () => {
  it('marks it deleted, ends every session (a fact each), mails until when it can be recovered, and drops the keys it created', async () => {
    const { deletion, me, store, outbox, announced, clock } = setup();
    const answer = await deletion.delete(me, { password: 'old password' });
    const until = new Date(clock.now().getTime() + 30 * DAY).toISOString();
    expect(answer).toEqual({ deleted_at: clock.now().toISOString(), recover_before: until });
    expect(store.users.get('usr_ada')!.deleted_at).toEqual(clock.now());
    expect([...store.sessions.values()].map((s) => [s.id, s.revoked_reason])).toEqual([
      ['ses_here', 'account_deleted'],
      ['ses_phone', 'account_deleted'],
      ['ses_bob', null],
    ]);
    expect(outbox.facts.map((f) => f.session_id)).toEqual(['ses_here', 'ses_phone']);
    expect(outbox.last('account_deleted')).toMatchObject({ to: 'ada@example.com', data: { deleted_at: clock.now().toISOString(), recover_before: until } });
    expect(outbox.kicks).toBe(1);
    // Not revoked: refused while the account is deleted (api-keys.spec.ts); gateways drop them from their caches.
    expect(announced).toEqual(['key_1']);
    expect(store.keys.every((k) => k.revoked_at === null)).toBe(true);
    // Once deleted, the account is not found by what signed-in people use.
    expect((await refusalOf(deletion.delete(me, { password: 'old password' }))).code).toBe('not_found');
  });

  it('needs the password, and refuses the owner of an organization other members belong to, naming it; nothing changes', async () => {
    const { deletion, me, store, orgs, outbox } = setup();
    expect((await refusalOf(deletion.delete(me, { password: 'guess' }))).code).toBe('forbidden');
    expect((await refusalOf(deletion.delete(me, {}))).code).toBe('invalid_request');
    orgs.owned = [
      { org_id: 'org_solo', org_name: 'Just me', members: 1 },
      { org_id: 'org_acme', org_name: 'Acme', members: 3 },
    ];
    const refusal = await refusalOf(deletion.delete(me, { password: 'old password' }));
    expect([refusal.code, refusal.status]).toEqual(['conflict', 409]);
    expect(refusal.message).toMatch(/owner of "Acme" \(org_acme\).*transfer ownership first/);
    expect(refusal.details).toEqual([{ path: 'org_acme', message: '"Acme": you own it, and 2 other member(s) belong to it' }]);
    expect(store.users.get('usr_ada')!.deleted_at).toBeNull();
    expect([...store.sessions.values()].every((s) => s.revoked_at === null)).toBe(true);
    expect(outbox.mails).toEqual([]);
    // An organization of one's own alone does not stand in the way.
    orgs.owned = [{ org_id: 'org_solo', org_name: 'Just me', members: 1 }];
    expect(ownershipRefusal(orgs.owned)).toBeUndefined();
    await deletion.delete(me, { password: 'old password' });
  });
});

describe('the 30-day window', () => {
  it('lets sign-in see a deleted account strictly before deleted_at + 30 days, and none from that instant', () => {
    const deletedAt = new Date('2026-11-01T00:00:00.000Z');
    const row = { id: 'usr_ada', email: 'a@example.com', password_hash: null, name: null, email_verified_at: null, created_at: deletedAt, updated_at: deletedAt, deleted_at: deletedAt };
    expect(recoverBefore(deletedAt).getTime() - deletedAt.getTime()).toBe(RECOVERY_WINDOW_MS);
    expect(signInAccount(row, new Date(deletedAt.getTime() + 30 * DAY - 1))).toBe(row);
    expect(signInAccount(row, new Date(deletedAt.getTime() + 30 * DAY))).toBeUndefined();
    expect(signInAccount({ ...row, deleted_at: null }, new Date('2030-01-01T00:00:00.000Z'))).toMatchObject({ id: 'usr_ada' });
    expect(signInAccount(undefined, deletedAt)).toBeUndefined();
  });
});

describe('recovering a deleted account', () => {
  async function deleted() {
    const s = setup();
    await s.deletion.delete(s.me, { password: 'old password' });
    return s;
  }

  it('gives a sign-in a 15-minute token (stored hashed) that brings the account back once, with a notice and a new session', async () => {
    const { recovery, store, outbox, opened, clock } = await deleted();
    clock.advance(29 * DAY);
    const refusal = await recovery.refuseSignIn(store.users.get('usr_ada')!);
    expect([refusal.code, refusal.status]).toEqual(['account_deleted', 403]);
    const { recovery_token, recover_before } = detailsOf(refusal);
    expect(recovery_token).toMatch(/^mrr_[A-Za-z0-9_-]{43}$/);
    expect(recover_before).toBe(new Date(clock.now().getTime() + DAY).toISOString());
    expect(store.recoveryTokens).toEqual([{ token_hash: sha256(recovery_token), user_id: 'usr_ada', created_at: clock.now(), expires_at: new Date(clock.now().getTime() + RECOVERY_TOKEN_TTL_MS), used_at: null }]);

    clock.advance(RECOVERY_TOKEN_TTL_MS - 1);
    expect(await recovery.recover(recovery_token, {})).toMatchObject({ user: { id: 'usr_ada' } });
    expect(opened).toEqual(['usr_ada']);
    expect(store.users.get('usr_ada')!.deleted_at).toBeNull();
    expect(outbox.last('account_recovered')).toMatchObject({ to: 'ada@example.com', data: { recovered_at: clock.now().toISOString() } });
    // Once.
    expect((await refusalOf(recovery.recover(recovery_token, {}))).code).toBe('invalid_code');
  });

  it('refuses an expired token (410), an unknown one (400), and recovery from the instant the window ends (410)', async () => {
    const { recovery, store, clock } = await deleted();
    const first = detailsOf(await recovery.refuseSignIn(store.users.get('usr_ada')!)).recovery_token;
    clock.advance(RECOVERY_TOKEN_TTL_MS);
    expect((await refusalOf(recovery.recover(first, {}))).code).toBe('expired');
    expect((await refusalOf(recovery.recover(`mrr_${'x'.repeat(43)}`, {}))).code).toBe('invalid_code');

    // A token made just before the window ends works up to its last millisecond, not at it.
    const deletedAt = store.users.get('usr_ada')!.deleted_at!;
    clock.set(new Date(deletedAt.getTime() + 30 * DAY - 2));
    const late = detailsOf(await recovery.refuseSignIn(store.users.get('usr_ada')!)).recovery_token;
    clock.advance(2);
    const ended = await refusalOf(recovery.recover(late, {}));
    expect([ended.code, ended.message]).toEqual(['expired', expect.stringMatching(/recovery window of this account ended/)]);
    expect(store.users.get('usr_ada')!.deleted_at).toEqual(deletedAt);
  });

  it('refuses a sign-in token for an account that is live again', async () => {
    const { recovery, store } = setup();
    await expect(recovery.refuseSignIn(store.users.get('usr_ada')!)).rejects.toMatchObject({ code: 'internal_error' });
  });
});
