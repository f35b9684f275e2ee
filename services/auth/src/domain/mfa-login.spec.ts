/** A login's second step without a database: the mfa_token's life and attempts, the code of its own account only, each code once. */
import { Secret, TOTP } from 'otpauth';
import { AppError } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, SecretBox, sha256 } from '@mailroom/platform';
import { clockAt, MemoryCredentials, memoryLimiter, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { MemoryChallenges, MemoryMfa } from '../../test/memory-mfa';
import { memorySignIns } from '../../test/memory-sign-ins';
import { memoryGuard } from '../../test/memory-attempts';
import { Mfa, MFA_FAILURES } from './mfa';
import { MFA_TOKEN_ATTEMPTS, MfaLogin } from './mfa-login';

/** Fixed secrets (RFC 6238's, and another), so that a code meant to be wrong is wrong on every run. */
const SECRETS = { usr_ada: Secret.fromLatin1('12345678901234567890').base32, usr_bob: Secret.fromLatin1('abcdefghijklmnopqrst').base32 };
const codeAt = (secret: string, at: Date, steps = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at.getTime() + steps * 30_000 });
const laptop = { ip: '203.0.113.7', userAgent: 'curl/8.4.0' };

async function setup() {
  const clock = clockAt('2026-11-28T10:00:10.000Z');
  const people = new MemoryCredentials();
  const ada = people.addUser('usr_ada', 'ada@example.com');
  const bob = people.addUser('usr_bob', 'bob@example.com');
  const store = new MemoryMfa();
  const outbox = new MemoryOutbox();
  const box = new SecretBox(DEVELOPMENT_ENCRYPTION_KEY);
  const mfa = new Mfa(memoryTransact, people, store, box, { verify: async () => false }, memoryLimiter(clock, MFA_FAILURES), outbox, clock, { issuer: 'Mailroom' });
  const { start, sessions } = memorySignIns(clock, outbox);
  const challenges = new MemoryChallenges();
  const deleted = { refuseSignIn: async (user: { id: string }) => new AppError('account_deleted', `recover ${user.id}`) };
  const login = new MfaLogin(challenges, people, mfa, start, clock, memoryGuard(clock).guard, memoryTransact, deleted);
  const codes: Record<string, string[]> = {};
  for (const [id, secret] of Object.entries(SECRETS)) {
    await store.putPending({ user_id: id, secret_sealed: box.seal(secret, `mfa-totp:${id}`), created_at: clock.now() });
    codes[id] = (await mfa.confirm(id, codeAt(secret, clock.now()))).recovery_codes;
  }
  // The codes of the confirming step are spent; the next step's are current.
  const next = (id: keyof typeof SECRETS, steps = 1) => codeAt(SECRETS[id], clock.now(), steps);
  return { clock, ada, bob, store, outbox, challenges, login, sessions, codes, next };
}

describe('MfaLogin', () => {
  it('answers a password with a token of 5 minutes, stored hashed, for accounts with MFA on only', async () => {
    const { login, ada, challenges, clock } = await setup();
    expect(await login.required(ada.id)).toBe(true);
    expect(await login.required('usr_nobody')).toBe(false);
    const challenge = await login.challenge(ada);
    expect(challenge).toEqual({ mfa_required: true, mfa_token: expect.stringMatching(/^mrm_[A-Za-z0-9_-]{43}$/), expires_in: 300 });
    expect(challenges.rows).toEqual([{ token_hash: sha256(challenge.mfa_token), user_id: ada.id, created_at: clock.now(), expires_at: new Date(clock.now().getTime() + 300_000), attempts: 0, used_at: null }]);
    // A token that ended goes when the next is made.
    clock.advance(300_000);
    await login.challenge(ada);
    expect(challenges.rows).toHaveLength(1);
  });

  it('opens the session with a current code, once; the token and the code are spent', async () => {
    const { login, ada, sessions, next, outbox } = await setup();
    const { mfa_token } = await login.challenge(ada);
    const code = next('usr_ada');
    const session = await login.verifyLogin({ mfa_token, code }, laptop);
    expect(session).toMatchObject({ user: { id: ada.id }, token_type: 'Bearer', access_token: `at:${sessions[0]!.id}` });
    expect(sessions.map((s) => [s.user_id, s.ip, s.user_agent])).toEqual([[ada.id, laptop.ip, laptop.userAgent]]);
    expect(outbox.last('new_sign_in')).toMatchObject({ to: ada.email, data: { with: 'password_and_mfa', client: 'curl', ip: laptop.ip } });
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada', 0) }, laptop)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/log in again/) });
    // The same code with a new token: its step was used.
    const again = await login.challenge(ada);
    await expect(login.verifyLogin({ mfa_token: again.mfa_token, code }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(sessions).toHaveLength(1);
  });

  it('asks a deleted account for its second factor before the recovery token, and opens no session', async () => {
    const { login, ada, next, sessions, clock } = await setup();
    ada.deleted_at = clock.now();
    const { mfa_token } = await login.challenge(ada);
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada', 3) }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'account_deleted', message: `recover ${ada.id}` });
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'unauthorized' });
    // Past its 30 days, the account is as unknown.
    clock.advance(30 * 86_400_000);
    const late = await login.challenge(ada);
    await expect(login.verifyLogin({ mfa_token: late.mfa_token, code: next('usr_ada', 1) }, laptop)).rejects.toMatchObject({ code: 'unauthorized' });
    expect(sessions).toHaveLength(0);
  });

  it('locks the account after 10 wrong codes across its tokens: then the right code waits too (429), until the lock ends', async () => {
    const { login, ada, next, sessions, clock } = await setup();
    const wrong = next('usr_ada', 3);
    for (let i = 0; i < 10; i++) {
      const { mfa_token } = await login.challenge(ada);
      await expect(login.verifyLogin({ mfa_token, code: wrong }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    }
    const { mfa_token } = await login.challenge(ada);
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 900 });
    clock.advance(900_000);
    const later = await login.challenge(ada);
    await login.verifyLogin({ mfa_token: later.mfa_token, code: next('usr_ada') }, laptop);
    expect(sessions).toHaveLength(1);
  });

  it('counts the attempts of a token: 5, the right one included, then it is dead', async () => {
    const { login, ada, next, sessions } = await setup();
    const { mfa_token } = await login.challenge(ada);
    const wrong = next('usr_ada', 3);
    for (let left = MFA_TOKEN_ATTEMPTS - 1; left >= 0; left--) {
      await expect(login.verifyLogin({ mfa_token, code: wrong }, laptop)).rejects.toMatchObject({
        code: 'invalid_credentials',
        message: expect.stringMatching(left === 0 ? /this mfa_token is spent: log in again/ : new RegExp(`${left} more attempts?`)),
      });
    }
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'unauthorized' });
    // The code was not spent: another token takes it.
    const fresh = await login.challenge(ada);
    await login.verifyLogin({ mfa_token: fresh.mfa_token, code: next('usr_ada') }, laptop);
    expect(sessions).toHaveLength(1);
  });

  it('refuses a token past its 5 minutes, and one nobody was given', async () => {
    const { login, ada, clock, next } = await setup();
    const { mfa_token } = await login.challenge(ada);
    clock.advance(300_000);
    await expect(login.verifyLogin({ mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(login.verifyLogin({ mfa_token: `mrm_${'A'.repeat(43)}`, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it("checks the code against the token's account only: another person's code or token proves nothing", async () => {
    const { login, ada, bob, next, codes, sessions } = await setup();
    const adas = await login.challenge(ada);
    const bobs = await login.challenge(bob);
    await expect(login.verifyLogin({ mfa_token: adas.mfa_token, code: next('usr_bob') }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(login.verifyLogin({ mfa_token: adas.mfa_token, code: codes.usr_bob![0]! }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(login.verifyLogin({ mfa_token: bobs.mfa_token, code: next('usr_ada') }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(sessions).toEqual([]);
    // Each with their own: the session is the token's person's.
    expect((await login.verifyLogin({ mfa_token: adas.mfa_token, code: next('usr_ada') }, laptop)).user.id).toBe(ada.id);
    expect((await login.verifyLogin({ mfa_token: bobs.mfa_token, code: codes.usr_bob![0]! }, laptop)).user.id).toBe(bob.id);
  });

  it('takes a recovery code once, and tells the person how many are left', async () => {
    const { login, ada, codes, outbox } = await setup();
    const first = await login.challenge(ada);
    await login.verifyLogin({ mfa_token: first.mfa_token, code: codes.usr_ada![4]! }, laptop);
    expect(outbox.last('mfa_recovery_code_used')).toMatchObject({ to: ada.email, data: { codes_left: 9 } });
    const second = await login.challenge(ada);
    await expect(login.verifyLogin({ mfa_token: second.mfa_token, code: codes.usr_ada![4]! }, laptop)).rejects.toMatchObject({ code: 'invalid_credentials' });
  });
});
