/**
 * The brute-force guard without a database: known and unknown emails are counted, locked and
 * answered alike (an email's case does not matter), a lock-out is told once and only when its
 * attempt failed, a success forgets, kinds are counted apart, concurrent attempts each count,
 * and forgotten rows are pruned.
 */
import { AppError } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { clockAt } from '../../test/memory-credentials';
import { memoryGuard } from '../../test/memory-attempts';
import { IdentifierHasher } from './attempt-guard';

const wrong = () => Promise.reject(new AppError('invalid_credentials', 'email or password is incorrect'));
const right = () => Promise.resolve('welcome');
/** What an attempt answers: its result, or the refusal's code and Retry-After. */
const outcome = (p: Promise<string>) => p.then((v) => v, (err: AppError) => [err.code, err.retryAfterSeconds ?? null]);

describe('AttemptGuard', () => {
  it('stores identifiers only as a keyed hash, the same whatever their case', () => {
    const hasher = new IdentifierHasher(DEVELOPMENT_ENCRYPTION_KEY);
    expect(hasher.hash(' Ada@Example.com')).toEqual(hasher.hash('ada@example.com'));
    expect(hasher.hash('ada@example.com')).not.toEqual(new IdentifierHasher(Buffer.alloc(32, 7).toString('base64')).hash('ada@example.com'));
    expect(hasher.hash('ada@example.com').toString('latin1')).not.toContain('ada');
  });

  it('answers a known and an unknown email identically, through the lock and after it', async () => {
    const clock = clockAt();
    const { guard, store, lockouts } = memoryGuard(clock);
    const run = async (email: string) => {
      const seen: unknown[] = [];
      for (let i = 0; i < 12; i++) seen.push(await outcome(guard.attempt('login', email, wrong)));
      seen.push(await outcome(guard.attempt('login', email, right)));
      return seen;
    };
    // The guard does not know which is an account: that is the point.
    const known = await run('ada@example.com');
    const unknown = await run('nobody@example.com');
    expect(known).toEqual([...Array(10).fill(['invalid_credentials', null]), ['rate_limited', 900], ['rate_limited', 900], ['rate_limited', 900]]);
    expect(unknown).toEqual(known);
    expect(store.rows.size).toBe(2);
    expect(lockouts.map((l) => l.identifier)).toEqual(['ada@example.com', 'nobody@example.com']);
    clock.advance(900_000);
    expect(await outcome(guard.attempt('login', 'ADA@example.com', right))).toBe('welcome');
  });

  it('tells a lock-out once, at the failed attempt that started it; a right 10th attempt starts none', async () => {
    const clock = clockAt();
    const { guard, lockouts } = memoryGuard(clock);
    for (let i = 0; i < 9; i++) await outcome(guard.attempt('login', 'ada@example.com', wrong));
    expect(await outcome(guard.attempt('login', 'ada@example.com', right))).toBe('welcome');
    expect(await outcome(guard.attempt('login', 'ada@example.com', wrong))).toEqual(['invalid_credentials', null]);
    expect(lockouts).toEqual([]);
    for (let i = 0; i < 15; i++) await outcome(guard.attempt('login', 'ada@example.com', wrong));
    expect(lockouts).toEqual([{ kind: 'login', identifier: 'ada@example.com', failures: 10, lockedAt: clock.now(), lockedUntil: new Date(clock.now().getTime() + 900_000) }]);
  });

  it('forgets the failures on a success', async () => {
    const { guard, store } = memoryGuard(clockAt());
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 9; i++) await outcome(guard.attempt('login', 'ada@example.com', wrong));
      expect(await outcome(guard.attempt('login', 'ada@example.com', right))).toBe('welcome');
    }
    expect(store.rows.size).toBe(0);
  });

  it('counts each kind of secret apart, and forgets one kind on demand', async () => {
    const { guard } = memoryGuard(clockAt());
    for (let i = 0; i < 10; i++) await outcome(guard.attempt('login', 'ada@example.com', wrong));
    expect(await outcome(guard.attempt('login', 'ada@example.com', right))).toEqual(['rate_limited', 900]);
    expect(await outcome(guard.attempt('password_reset', 'ada@example.com', right))).toBe('welcome');
    await guard.forget('login', 'Ada@example.com');
    expect(await outcome(guard.attempt('login', 'ada@example.com', right))).toBe('welcome');
  });

  it('counts attempts when they start: of 30 at once, 10 are tried and 20 refused', async () => {
    const { guard, lockouts } = memoryGuard(clockAt());
    const tried: number[] = [];
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => outcome(guard.attempt('mfa', 'ada@example.com', () => (tried.push(i), wrong())))));
    expect(tried).toHaveLength(10);
    expect(results.filter((r) => JSON.stringify(r) === JSON.stringify(['rate_limited', 900]))).toHaveLength(20);
    expect(lockouts).toHaveLength(1);
  });

  it('runs work that writes in the transaction of the count; its failure counts all the same', async () => {
    const { guard, lockouts } = memoryGuard(clockAt());
    const handed: unknown[] = [];
    const within = (email: string, ok: boolean) =>
      outcome(guard.attemptWithin('password_reset', email, async (tx) => (handed.push(tx), ok ? 'welcome' : wrong())));
    const answers = await Promise.all(Array.from({ length: 12 }, () => within('ada@example.com', false)));
    expect(answers).toEqual([...Array(10).fill(['invalid_credentials', null]), ['rate_limited', 900], ['rate_limited', 900]]);
    expect(handed).toHaveLength(10);
    expect(handed.every((tx) => typeof tx === 'object' && tx !== null)).toBe(true);
    expect(lockouts).toHaveLength(1);
    expect(await within('bob@example.com', true)).toBe('welcome');
  });

  it('says what is refused and how to get in, in the same words for every email', async () => {
    const { guard } = memoryGuard(clockAt());
    const refusal = async (kind: 'login' | 'password_reset' | 'email_verification' | 'mfa') => {
      for (let i = 0; i < 10; i++) await outcome(guard.attempt(kind, 'someone@example.com', wrong));
      return guard.attempt(kind, 'someone@example.com', right).catch((err: AppError) => [err.status, err.message]);
    };
    expect(await refusal('login')).toEqual([429, expect.stringMatching(/^too many failed sign-ins for this email; sign-in is refused for 900 s, even with the right password\. Resetting the password .* lifts the lock$/)]);
    expect(await refusal('password_reset')).toEqual([429, expect.stringMatching(/codes are refused for 900 s\. The link of the reset mail still works$/)]);
    expect(await refusal('email_verification')).toEqual([429, expect.stringMatching(/The link of the verification mail still works$/)]);
    expect(await refusal('mfa')).toEqual([429, expect.stringMatching(/^too many wrong second-factor codes/)]);
  });

  it('prunes what is forgotten', async () => {
    const clock = clockAt();
    const { guard, store } = memoryGuard(clock);
    await outcome(guard.attempt('login', 'old@example.com', wrong));
    clock.advance(12 * 3_600_000);
    for (let i = 0; i < 10; i++) await outcome(guard.attempt('login', 'locked@example.com', wrong));
    clock.advance(12 * 3_600_000);
    // The lone failure is a day old; the lock is remembered a day past its end.
    expect(await guard.prune()).toBe(1);
    expect(store.rows.size).toBe(1);
    clock.advance(12 * 3_600_000 + 900_000 - 1);
    expect(await guard.prune()).toBe(0);
    clock.advance(1);
    expect(await guard.prune()).toBe(1);
  });
});
