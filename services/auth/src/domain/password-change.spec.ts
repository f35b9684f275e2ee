/** Changing the password signed in: the current one asked again, failures limited, other sessions ended. */
import { clockAt, MemoryCredentials, memoryLimiter, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { CHANGE_FAILURES, PasswordChange } from './password-change';

function setup() {
  const clock = clockAt();
  const store = new MemoryCredentials();
  const outbox = new MemoryOutbox();
  store.addUser('usr_ada', 'ada@example.com', 'hash:old password');
  for (const id of ['ses_here', 'ses_phone', 'ses_laptop']) store.addSession(id, 'usr_ada');
  const passwords = { hash: async (p: string) => `hash:${p}`, verify: async (h: string | null | undefined, p: string) => h === `hash:${p}` };
  const change = new PasswordChange(memoryTransact, store, store, passwords, memoryLimiter(clock, CHANGE_FAILURES), outbox, clock, { accessTokenTtlSeconds: 900 });
  const me = { user_id: 'usr_ada', session_id: 'ses_here' };
  return { clock, store, outbox, change, me };
}

describe('PasswordChange', () => {
  it('sets the new password, ends every other session (this one goes on) and mails a notice', async () => {
    const { change, me, store, outbox, clock } = setup();
    await change.change(me, { current_password: 'old password', new_password: 'a new long password' });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:a new long password');
    expect([...store.sessions.values()].map((s) => [s.id, s.revoked_reason])).toEqual([
      ['ses_here', null],
      ['ses_phone', 'password_changed'],
      ['ses_laptop', 'password_changed'],
    ]);
    expect(outbox.facts.map((f) => f.session_id)).toEqual(['ses_phone', 'ses_laptop']);
    expect(outbox.last('password_changed')).toMatchObject({ to: 'ada@example.com', data: { how: 'change', changed_at: clock.now().toISOString() } });
    expect(outbox.kicks).toBe(1);
  });

  it('refuses a wrong current password with 403, and after 5 in 15 minutes refuses even the right one until the window ends', async () => {
    const { change, me, store, clock } = setup();
    for (let i = 0; i < CHANGE_FAILURES.count; i++) {
      await expect(change.change(me, { current_password: 'guess', new_password: 'a new long password' })).rejects.toMatchObject({ code: 'forbidden', details: [{ path: 'body.current_password' }] });
      clock.advance(60_000);
    }
    // The first failure was 5 minutes ago: 10 minutes to wait.
    await expect(change.change(me, { current_password: 'old password', new_password: 'a new long password' })).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 600 });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:old password');
    clock.advance(600_000);
    await change.change(me, { current_password: 'old password', new_password: 'a new long password' });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:a new long password');
  });
});
