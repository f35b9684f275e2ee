/**
 * Password reset without a database: the request answers before anything is looked up and
 * sends a mail only for an account (at most once a minute); the code or link sets the
 * password once, ends every session with a revocation fact each, verifies the address and
 * mails a notice.
 */
import type { AppError } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { clockAt, MemoryCredentials, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { AfterAnswer } from './after-answer';
import { CodeHasher, OneTimeCodes } from './one-time-codes';
import { memoryGuard } from '../../test/memory-attempts';
import { PasswordReset } from './password-reset';

function setup(store = new MemoryCredentials()) {
  const clock = clockAt();
  const outbox = new MemoryOutbox();
  store.addUser('usr_ada', 'ada@example.com');
  store.addSession('ses_1', 'usr_ada');
  store.addSession('ses_2', 'usr_ada');
  const errors: unknown[] = [];
  const codes = new OneTimeCodes(store, new CodeHasher(DEVELOPMENT_ENCRYPTION_KEY), 'https://app.example.com', clock);
  const passwords = { hash: async (p: string) => `hash:${p}` };
  const { guard, lockouts } = memoryGuard(clock);
  const reset = new PasswordReset(memoryTransact, store, store, passwords, codes, outbox, clock, { accessTokenTtlSeconds: 900, onError: (err) => errors.push(err), onDropped: () => undefined }, guard);
  return { clock, store, outbox, reset, errors, guard, lockouts };
}

describe('PasswordReset', () => {
  it('answers before the address is looked up, and mails a code only to an account', async () => {
    const lookups: string[] = [];
    class Watched extends MemoryCredentials {
      override findLiveByEmail(email: string) {
        lookups.push(email);
        return super.findLiveByEmail(email);
      }
    }
    const { reset, outbox, errors } = setup(new Watched());
    reset.request('nobody@example.com');
    reset.request('ada@example.com');
    // request() has returned: whatever it answers was decided before any look-up ran.
    expect(lookups).toEqual([]);
    await reset.settled();
    expect(lookups).toEqual(['nobody@example.com', 'ada@example.com']);
    expect(outbox.mails.map((m) => [m.to, m.template])).toEqual([['ada@example.com', 'password_reset']]);
    expect(errors).toEqual([]);
  });

  it('sends at most one mail a minute per account, silently', async () => {
    const { reset, outbox, clock } = setup();
    reset.request('ada@example.com');
    reset.request('ada@example.com');
    await reset.settled();
    expect(outbox.mails).toHaveLength(1);
    clock.advance(60_000);
    reset.request('ada@example.com');
    await reset.settled();
    expect(outbox.mails).toHaveLength(2);
  });

  it('sets the new password with the code, ends every session, verifies the address and sends a notice', async () => {
    const { reset, outbox, store, clock } = setup();
    reset.request('ada@example.com');
    await reset.settled();
    const { code } = outbox.last('password_reset').data;
    await reset.reset({ email: 'ada@example.com', code, new_password: 'a new long password' });
    const ada = store.users.get('usr_ada')!;
    expect(ada.password_hash).toBe('hash:a new long password');
    expect(ada.email_verified_at).toEqual(clock.now());
    expect([...store.sessions.values()].map((s) => [s.id, s.revoked_reason])).toEqual([
      ['ses_1', 'password_reset'],
      ['ses_2', 'password_reset'],
    ]);
    const until = new Date(clock.now().getTime() + 900_000).toISOString();
    expect(outbox.facts).toEqual([
      { session_id: 'ses_1', user_id: 'usr_ada', tokens_valid_until: until },
      { session_id: 'ses_2', user_id: 'usr_ada', tokens_valid_until: until },
    ]);
    expect(outbox.last('password_changed')).toMatchObject({ to: 'ada@example.com', data: { how: 'reset', changed_at: clock.now().toISOString() } });
    // Once.
    await expect(reset.reset({ email: 'ada@example.com', code, new_password: 'another long password' })).rejects.toMatchObject({ code: 'invalid_code' });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:a new long password');
  });

  it('sets it with the link token within 30 minutes, not after', async () => {
    const ok = setup();
    ok.reset.request('ada@example.com');
    await ok.reset.settled();
    ok.clock.advance(30 * 60_000 - 1);
    await ok.reset.reset({ token: ok.outbox.last('password_reset').data.token, new_password: 'a new long password' });
    expect(ok.store.users.get('usr_ada')!.password_hash).toBe('hash:a new long password');

    const late = setup();
    late.reset.request('ada@example.com');
    await late.reset.settled();
    late.clock.advance(30 * 60_000);
    await expect(late.reset.reset({ token: late.outbox.last('password_reset').data.token, new_password: 'a new long password' })).rejects.toMatchObject({ code: 'expired' });
    expect(late.store.users.get('usr_ada')!.password_hash).toBe('hash:old password');
    expect(late.outbox.facts).toEqual([]);
  });

  it('changes nothing on a wrong code, and kills the code after 5 attempts', async () => {
    const { reset, outbox, store } = setup();
    reset.request('ada@example.com');
    await reset.settled();
    const { code } = outbox.last('password_reset').data;
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) await expect(reset.reset({ email: 'ada@example.com', code: wrong, new_password: 'a new long password' })).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(reset.reset({ email: 'ada@example.com', code, new_password: 'a new long password' })).rejects.toMatchObject({ code: 'invalid_code' });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:old password');
    expect([...store.sessions.values()].every((s) => s.revoked_at === null)).toBe(true);
  });
});

describe('AfterAnswer', () => {
  it('works a few items at a time, reports failures, and drops what exceeds its queue', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const errors: unknown[] = [];
    let dropped = 0;
    const queue = new AfterAnswer<number>(
      async (n) => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (n === 3) throw new Error('three');
        done.push(n);
      },
      { concurrency: 2, maxQueued: 4, onError: (err) => errors.push(err), onDropped: () => dropped++ },
    );
    // Added in one turn: nothing has started yet, four wait, four are dropped.
    for (let n = 0; n < 8; n++) queue.add(n);
    expect(running).toBe(0);
    await queue.settled();
    expect(most).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2]);
    expect(errors).toEqual([new Error('three')]);
    expect(dropped).toBe(4);
    // Room again once worked off.
    queue.add(9);
    await queue.settled();
    expect(done).toContain(9);
  });
});

describe('PasswordReset under the brute-force guard', () => {
  const wrongOf = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('refuses codes of every mail after 10 wrong ones for the email, an unknown email alike; the link still works and lifts the sign-in lock', async () => {
    const { reset, outbox, store, clock, guard, lockouts } = setup();
    const attempt = (email: string, code: string) => reset.reset({ email, code, new_password: 'a new long password' }).then(() => 'ok', (err: AppError) => [err.code, err.retryAfterSeconds]);
    const answers: unknown[] = [];
    // Two mails' worth of wrong codes (5 each), a minute apart: the 11th attempt is refused before its code is looked at.
    for (const _mail of [1, 2]) {
      reset.request('ada@example.com');
      await reset.settled();
      const { code } = outbox.last('password_reset').data;
      for (let i = 0; i < 5; i++) answers.push(await attempt('ada@example.com', wrongOf(code)));
      clock.advance(60_000);
    }
    reset.request('ada@example.com');
    await reset.settled();
    const third = outbox.last('password_reset').data;
    expect(answers).toEqual(Array(10).fill(['invalid_code', undefined]));
    expect(await attempt('ada@example.com', third.code)).toEqual(['rate_limited', 840]);
    for (let i = 0; i < 10; i++) await attempt('nobody@example.com', '123456');
    expect(await attempt('nobody@example.com', '123456')).toEqual(['rate_limited', 900]);
    expect(lockouts.map((l) => [l.kind, l.identifier])).toEqual([
      ['password_reset', 'ada@example.com'],
      ['password_reset', 'nobody@example.com'],
    ]);

    // Sign-in locked too (someone guessed passwords); the link of the mail resets, and both locks are lifted.
    for (let i = 0; i < 10; i++) await guard.admit('login', 'ada@example.com');
    await expect(guard.admit('login', 'ada@example.com')).rejects.toMatchObject({ code: 'rate_limited' });
    await reset.reset({ token: third.token, new_password: 'a new long password' });
    expect(store.users.get('usr_ada')!.password_hash).toBe('hash:a new long password');
    await expect(guard.admit('login', 'ada@example.com')).resolves.toMatchObject({ lock: undefined });
    await expect(guard.admit('password_reset', 'ada@example.com')).resolves.toMatchObject({ lock: undefined });
  });
});
