/** Email verification without a database: the signup mail, resends and their limits, verifying by link or code. */
import type { AppError } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { clockAt, MemoryCredentials, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { memoryGuard } from '../../test/memory-attempts';
import { EmailVerification } from './email-verification';
import { CodeHasher, OneTimeCodes } from './one-time-codes';

function setup() {
  const clock = clockAt();
  const store = new MemoryCredentials();
  const outbox = new MemoryOutbox();
  store.addUser('usr_ada', 'ada@example.com');
  const codes = new OneTimeCodes(store, new CodeHasher(DEVELOPMENT_ENCRYPTION_KEY), 'https://app.example.com', clock);
  const { guard, lockouts } = memoryGuard(clock);
  const verification = new EmailVerification(memoryTransact, store, store, codes, outbox, clock, guard);
  const signup = () => memoryTransact((tx) => verification.queueInSignup(tx, { id: 'usr_ada', email: 'ada@example.com' }));
  return { clock, store, outbox, verification, signup, lockouts };
}

describe('EmailVerification', () => {
  it('mails a code and a link at signup, and verifies the address with the code', async () => {
    const { verification, outbox, store, signup, clock } = setup();
    await signup();
    const mail = outbox.last('email_verification');
    expect(mail.to).toBe('ada@example.com');
    expect(mail.id).toMatch(/^sml_/);
    const user = await verification.verify({ email: 'ada@example.com', code: mail.data.code });
    expect(user).toMatchObject({ id: 'usr_ada', email_verified: true });
    expect(store.users.get('usr_ada')!.email_verified_at).toEqual(clock.now());
    // Once: the code is used.
    await expect(verification.verify({ email: 'ada@example.com', code: mail.data.code })).rejects.toMatchObject({ code: 'invalid_code' });
  });

  it('verifies with the link token alone; an expired link is 410', async () => {
    const { verification, outbox, signup, clock } = setup();
    await signup();
    const { token } = outbox.last('email_verification').data;
    expect(await verification.verify({ token })).toMatchObject({ email_verified: true });

    const late = setup();
    await late.signup();
    late.clock.advance(24 * 3_600_000);
    await expect(late.verification.verify({ token: late.outbox.last('email_verification').data.token })).rejects.toMatchObject({ code: 'expired', status: 410 });
    expect(clock.now()).toEqual(clockAt().now());
  });

  it('resends at most once a minute and 5 times an hour; the new mail replaces the old', async () => {
    const { verification, outbox, signup, clock } = setup();
    await signup();
    const first = outbox.last('email_verification').data;
    await expect(verification.resend('usr_ada')).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60 });
    clock.advance(60_000);
    await verification.resend('usr_ada');
    expect(outbox.mails).toHaveLength(2);
    expect(outbox.kicks).toBe(1);
    await expect(verification.verify({ token: first.token })).rejects.toMatchObject({ code: 'invalid_code' });
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await verification.resend('usr_ada');
    }
    // Five in the hour (the signup's included): the next when the first leaves it.
    clock.advance(60_000);
    await expect(verification.resend('usr_ada')).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 55 * 60 });
    clock.advance(55 * 60_000);
    await verification.resend('usr_ada');
    expect(await verification.verify({ token: outbox.last('email_verification').data.token })).toMatchObject({ email_verified: true });
    await expect(verification.resend('usr_ada')).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/verified already/) });
  });

  it('does not verify an address the account no longer has', async () => {
    const { verification, outbox, store, signup } = setup();
    await signup();
    store.users.get('usr_ada')!.email = 'ada@elsewhere.example';
    await expect(verification.verify({ token: outbox.last('email_verification').data.token })).rejects.toMatchObject({ code: 'invalid_code', message: expect.stringMatching(/no longer has/) });
    expect(store.users.get('usr_ada')!.email_verified_at).toBeNull();
  });
});

describe('EmailVerification under the brute-force guard', () => {
  it('refuses codes after 10 wrong ones for the email, across mails; the link still verifies', async () => {
    const { verification, outbox, signup, clock, lockouts } = setup();
    await signup();
    const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const attempt = (code: string) => verification.verify({ email: 'ada@example.com', code }).then(() => 'ok', (err: AppError) => [err.code, err.retryAfterSeconds]);
    for (let i = 0; i < 5; i++) expect(await attempt(wrong(outbox.last('email_verification').data.code))).toEqual(['invalid_code', undefined]);
    clock.advance(60_000);
    await verification.resend('usr_ada');
    const { code, token } = outbox.last('email_verification').data;
    for (let i = 0; i < 5; i++) expect(await attempt(wrong(code))).toEqual(['invalid_code', undefined]);
    expect(await attempt(code)).toEqual(['rate_limited', 900]);
    expect(lockouts.map((l) => [l.kind, l.identifier, l.failures])).toEqual([['email_verification', 'ada@example.com', 10]]);
    expect(await verification.verify({ token })).toMatchObject({ email_verified: true });
  });
});
