/** The second factor without a database: TOTP steps, enrolment, confirmation, recovery codes, removal, and the one check of a code. */
import { Secret, TOTP } from 'otpauth';
import { RECOVERY_CODE_COUNT } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, SecretBox } from '@mailroom/platform';
import { clockAt, MemoryCredentials, memoryLimiter, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { MemoryMfa } from '../../test/memory-mfa';
import { Mfa, MFA_FAILURES } from './mfa';
import { looksLikeRecoveryCode, newRecoveryCodes, recoveryCodeHash } from './recovery-codes';
import { otpauthUri, stepOf, stepUnused } from './totp';

const NO_TX = Object.create(null);

/** The secret of RFC 6238's test vectors: fixed, so that a code meant to be wrong is wrong on every run. */
const SECRET = Secret.fromLatin1('12345678901234567890').base32;

/** What an authenticator app shows at `at` (or `steps` steps of 30 s later). */
const codeAt = (secret: string, at: Date, steps = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at.getTime() + steps * 30_000 });

function setup() {
  const clock = clockAt('2026-11-28T10:00:10.000Z');
  const people = new MemoryCredentials();
  const ada = people.addUser('usr_ada', 'ada@example.com', 'hash:old password');
  const bob = people.addUser('usr_bob', 'bob@example.com', 'hash:bob password');
  const store = new MemoryMfa();
  const outbox = new MemoryOutbox();
  const box = new SecretBox(DEVELOPMENT_ENCRYPTION_KEY);
  const passwords = { verify: async (h: string | null | undefined, p: string) => h === `hash:${p}` };
  const mfa = new Mfa(memoryTransact, people, store, box, passwords, memoryLimiter(clock, MFA_FAILURES), outbox, clock, { issuer: 'Mailroom' });
  /** An enrolment of SECRET, as enrol makes one with a random secret. */
  const enrolled = (userId = ada.id) => store.putPending({ user_id: userId, secret_sealed: box.seal(SECRET, `mfa-totp:${userId}`), created_at: clock.now() });
  /** Enrols SECRET and confirms; answers the recovery codes. */
  const turnOn = async (userId = ada.id) => {
    await enrolled(userId);
    const { recovery_codes } = await mfa.confirm(userId, codeAt(SECRET, clock.now()));
    return { secret: SECRET, codes: recovery_codes };
  };
  return { clock, people, ada, bob, store, outbox, box, mfa, enrolled, turnOn };
}

describe('TOTP', () => {
  it('finds the step of a code among now and one step either side (RFC 6238 test vector, 6 digits)', () => {
    const secret = Secret.fromLatin1('12345678901234567890').base32;
    expect(stepOf(secret, '287082', new Date(59_000))).toBe(1);
    expect(stepOf(secret, '287082', new Date(89_000))).toBe(1);
    expect(stepOf(secret, '287082', new Date(29_000))).toBe(1);
    expect(stepOf(secret, '287082', new Date(90_000))).toBeUndefined();
    expect(stepOf(secret, '287083', new Date(59_000))).toBeUndefined();
  });

  it('accepts a step once, and none older than the last accepted', () => {
    expect(stepUnused(5, null)).toBe(true);
    expect(stepUnused(6, 5)).toBe(true);
    expect([stepUnused(5, 5), stepUnused(4, 5)]).toEqual([false, false]);
  });

  it('writes the key URI an authenticator reads', () => {
    expect(otpauthUri('JBSWY3DPEHPK3PXP', 'ada@example.com', 'Mailroom')).toBe('otpauth://totp/Mailroom:ada%40example.com?issuer=Mailroom&secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30');
  });
});

describe('recovery codes', () => {
  it('makes ten different codes of 80 bits, taken in any case and without dashes, hashed per account', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const c of codes) expect(c).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    const code = codes[0]!;
    expect(recoveryCodeHash('usr_a', code.toUpperCase().replace(/-/g, ''))).toEqual(recoveryCodeHash('usr_a', code));
    expect(recoveryCodeHash('usr_b', code)).not.toEqual(recoveryCodeHash('usr_a', code));
    expect([looksLikeRecoveryCode(code), looksLikeRecoveryCode('123456'), looksLikeRecoveryCode('iiii-llll-oooo-uuuu')]).toEqual([true, false, false]);
  });
});

describe('Mfa', () => {
  it('enrols: a secret sealed at rest for this account, pending until confirmed; a new enrolment replaces it', async () => {
    const { mfa, ada, store, box } = setup();
    const first = await mfa.enrol(ada.id);
    expect(first).toEqual({ otpauth_uri: expect.stringMatching(/^otpauth:\/\/totp\/Mailroom:ada%40example\.com\?issuer=Mailroom&secret=[A-Z2-7]{32}&/), secret: expect.stringMatching(/^[A-Z2-7]{32}$/), algorithm: 'SHA1', digits: 6, period: 30 });
    const row = store.totp.get(ada.id)!;
    expect(row.secret_sealed.toString('latin1')).not.toContain(first.secret);
    expect(box.open(row.secret_sealed, `mfa-totp:${ada.id}`).toString()).toBe(first.secret);
    // Sealed for this account: moved to another, it does not open.
    expect(() => box.open(row.secret_sealed, 'mfa-totp:usr_bob')).toThrow();
    expect(await mfa.status(ada.id)).toEqual({ enabled: false, enabled_at: null, enrolment_pending: true, recovery_codes_left: 0 });
    const second = await mfa.enrol(ada.id);
    expect(second.secret).not.toBe(first.secret);
    expect(await mfa.isEnabled(ada.id)).toBe(false);
  });

  it('turns on with a current code of the pending secret, answers ten recovery codes stored only hashed, and mails a notice', async () => {
    const { mfa, ada, store, outbox, clock, enrolled } = setup();
    await expect(mfa.confirm(ada.id, '123456')).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/no enrolment/) });
    await enrolled(ada.id);
    const secret = SECRET;
    await expect(mfa.confirm(ada.id, codeAt(secret, clock.now(), 2))).rejects.toMatchObject({ code: 'forbidden', details: [{ path: 'body.code' }] });
    const on = await mfa.confirm(ada.id, codeAt(secret, clock.now(), -1));
    expect(on).toEqual({ enabled: true, enabled_at: clock.now().toISOString(), recovery_codes: expect.any(Array) });
    expect(on.recovery_codes).toHaveLength(10);
    expect(store.recovery.map((r) => r.code_hash)).toEqual(on.recovery_codes.map((c) => recoveryCodeHash(ada.id, c)));
    expect(outbox.last('mfa_enabled')).toMatchObject({ to: ada.email, data: { enabled_at: clock.now().toISOString() } });
    expect(JSON.stringify(outbox.mails)).not.toContain(on.recovery_codes[0]);
    expect(await mfa.status(ada.id)).toEqual({ enabled: true, enabled_at: clock.now().toISOString(), enrolment_pending: false, recovery_codes_left: 10 });
    expect(await mfa.isEnabled(ada.id)).toBe(true);
    // On: no second enrolment, no second confirmation.
    await expect(mfa.enrol(ada.id)).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/on already/) });
    await expect(mfa.confirm(ada.id, codeAt(secret, clock.now(), 1))).rejects.toMatchObject({ code: 'conflict' });
  });

  it('checks a code once: a TOTP step is refused the second time, and so is an older one; the next step is accepted', async () => {
    const { mfa, ada, store, turnOn, clock } = setup();
    const { secret } = await turnOn();
    const user = { id: ada.id, email: ada.email };
    // The confirming step is spent already.
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now()))).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now(), 1))).toBe(true);
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now(), 1))).toBe(false);
    clock.advance(30_000);
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now(), -1))).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now(), 2))).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, codeAt(secret, clock.now(), 1))).toBe(true);
    expect(store.totp.get(ada.id)!.last_used_step).toBe(TOTP.counter({ timestamp: clock.now().getTime() }) + 1);
    expect(store.locks).toBeGreaterThan(0);
  });

  it('checks a recovery code once, in any case, and mails how many are left; not another account\'s, nor without MFA', async () => {
    const { mfa, ada, bob, turnOn, outbox, clock } = setup();
    const { codes } = await turnOn();
    const user = { id: ada.id, email: ada.email };
    expect(await mfa.checkCode(NO_TX, { id: bob.id, email: bob.email }, codes[0]!)).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, codes[0]!.toUpperCase().replace(/-/g, ''))).toBe(true);
    expect(outbox.last('mfa_recovery_code_used')).toMatchObject({ to: ada.email, data: { used_at: clock.now().toISOString(), codes_left: 9 } });
    expect(await mfa.checkCode(NO_TX, user, codes[0]!)).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, 'abcd-efgh-jkmn-pqrs')).toBe(false);
    expect((await mfa.status(ada.id)).recovery_codes_left).toBe(9);
    expect(outbox.mails.filter((m) => m.template === 'mfa_recovery_code_used')).toHaveLength(1);
  });

  it('regenerates the recovery codes with a current code: the old ones stop working, a notice goes out', async () => {
    const { mfa, ada, turnOn, outbox, clock } = setup();
    const { secret, codes } = await turnOn();
    await expect(mfa.regenerateRecoveryCodes(ada.id, '000000')).rejects.toMatchObject({ code: 'forbidden', details: [{ path: 'body.code' }] });
    const fresh = await mfa.regenerateRecoveryCodes(ada.id, codeAt(secret, clock.now(), 1));
    expect(fresh.recovery_codes).toHaveLength(10);
    expect(fresh.recovery_codes).not.toContain(codes[0]);
    expect(outbox.last('mfa_recovery_codes_regenerated')).toMatchObject({ data: { regenerated_at: clock.now().toISOString() } });
    const user = { id: ada.id, email: ada.email };
    expect(await mfa.checkCode(NO_TX, user, codes[1]!)).toBe(false);
    // A recovery code proves it too (once): the new set replaces it with the rest.
    const again = await mfa.regenerateRecoveryCodes(ada.id, fresh.recovery_codes[0]!);
    expect(await mfa.checkCode(NO_TX, user, fresh.recovery_codes[1]!)).toBe(false);
    expect(await mfa.checkCode(NO_TX, user, again.recovery_codes[0]!)).toBe(true);
  });

  it('turns off with the password or a current code; wrong ones are 403 and 5 in 15 minutes make the person wait', async () => {
    const { mfa, ada, bob, turnOn, outbox, store, clock } = setup();
    await turnOn();
    for (let i = 0; i < MFA_FAILURES.count; i++) {
      await expect(mfa.remove(ada.id, { password: 'guess' })).rejects.toMatchObject({ code: 'forbidden', details: [{ path: 'body.password' }] });
      clock.advance(60_000);
    }
    await expect(mfa.remove(ada.id, { password: 'old password' })).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 600 });
    expect(await mfa.isEnabled(ada.id)).toBe(true);
    clock.advance(600_000);
    await mfa.remove(ada.id, { password: 'old password' });
    expect(outbox.last('mfa_disabled')).toMatchObject({ to: ada.email, data: { disabled_at: clock.now().toISOString(), with: 'password' } });
    expect([store.totp.has(ada.id), store.recovery.length]).toEqual([false, 0]);
    expect(await mfa.status(ada.id)).toEqual({ enabled: false, enabled_at: null, enrolment_pending: false, recovery_codes_left: 0 });
    await expect(mfa.remove(ada.id, { password: 'old password' })).rejects.toMatchObject({ code: 'conflict' });

    const { codes } = await turnOn(bob.id);
    await expect(mfa.remove(bob.id, { code: '000000' })).rejects.toMatchObject({ code: 'forbidden', details: [{ path: 'body.code' }] });
    await mfa.remove(bob.id, { code: codes[3]! });
    expect(outbox.last('mfa_disabled')).toMatchObject({ to: bob.email, data: { with: 'recovery_code' } });
    // Turned off with a recovery code: the notice of turning off says it; no second one of the code.
    expect(outbox.mails.filter((m) => m.template === 'mfa_recovery_code_used')).toHaveLength(0);
  });

  it('answers not found for an account that is gone', async () => {
    const { mfa } = setup();
    await expect(mfa.enrol('usr_nobody')).rejects.toMatchObject({ code: 'not_found' });
    await expect(mfa.confirm('usr_nobody', '123456')).rejects.toMatchObject({ code: 'not_found' });
  });
});
