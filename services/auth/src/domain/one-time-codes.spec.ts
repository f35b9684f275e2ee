/**
 * The rules of mailed codes and link tokens, on an injected clock: expiry on both sides of
 * its instant, 5 attempts per code (counted before the comparison), single use, replacement
 * by a newer mail, the keyed hash, and how often a new code may be made.
 */
import { createHmac } from 'node:crypto';
import { DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { clockAt, MemoryCredentials, memoryTransact } from '../../test/memory-credentials';
import { CODE_POLICY, CodeHasher, MAX_CODE_ATTEMPTS, OneTimeCodes, codeAccepted, issueWait, tokenRefusal } from './one-time-codes';

const MINUTE = 60_000;
const hasher = new CodeHasher(DEVELOPMENT_ENCRYPTION_KEY);

function setup() {
  const clock = clockAt();
  const store = new MemoryCredentials();
  store.addUser('usr_ada', 'ada@example.com');
  const codes = new OneTimeCodes(store, hasher, 'https://app.example.com/', clock);
  const issue = (purpose: 'email_verification' | 'password_reset' = 'password_reset') =>
    memoryTransact(async (tx) => {
      const issued = await codes.issue(tx, { id: 'usr_ada', email: 'ada@example.com' }, purpose);
      if (!issued) throw new Error('not issued');
      return issued;
    });
  return { clock, store, codes, issue };
}

/** A code other than `code`. */
const other = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('issueWait: one new code a minute, five an hour', () => {
  const now = new Date('2026-11-27T10:00:00.000Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);

  it('lets the first code go, and the next one a minute after the last', () => {
    expect(issueWait([], now)).toBeUndefined();
    expect(issueWait([ago(MINUTE - 1_000)], now)).toBe(1);
    expect(issueWait([ago(10_000)], now)).toBe(50);
    expect(issueWait([ago(MINUTE)], now)).toBeUndefined();
  });

  it('counts five an hour, the window opening again when the oldest leaves it', () => {
    const four = [50, 40, 30, 20].map((m) => ago(m * MINUTE));
    expect(issueWait(four, now)).toBeUndefined();
    const five = [...four, ago(10 * MINUTE)];
    // The oldest (50 minutes ago) leaves the hour in 10 minutes.
    expect(issueWait(five, now)).toBe(10 * 60);
    expect(issueWait(five.map((t) => new Date(t.getTime() - 10 * MINUTE)), now)).toBeUndefined();
    // Six within the hour (one from before the limit): still the fifth-newest decides.
    expect(issueWait([ago(59 * MINUTE), ...five], now)).toBe(10 * 60);
  });
});

describe('the keyed hash of codes', () => {
  it('is an HMAC under a key derived from the secrets key, bound to its row', () => {
    const plain = createHmac('sha256', Buffer.from(DEVELOPMENT_ENCRYPTION_KEY, 'base64')).update('otc_1:123456').digest();
    expect(hasher.code('otc_1', '123456')).not.toEqual(plain);
    expect(hasher.code('otc_1', '123456')).not.toEqual(hasher.code('otc_2', '123456'));
    expect(new CodeHasher(Buffer.alloc(32, 7).toString('base64')).code('otc_1', '123456')).not.toEqual(hasher.code('otc_1', '123456'));
    expect(hasher.codeMatches('otc_1', '123456', hasher.code('otc_1', '123456'))).toBe(true);
    expect(hasher.codeMatches('otc_1', '123457', hasher.code('otc_1', '123456'))).toBe(false);
    expect(hasher.codeMatches('otc_1', '123456', Buffer.alloc(3))).toBe(false);
  });
});

describe('codeAccepted and tokenRefusal', () => {
  const made = new Date('2026-11-27T10:00:00.000Z');
  const row = { id: 'otc_1', code_hash: hasher.code('otc_1', '042042'), attempts: 1, code_expires_at: new Date(made.getTime() + 15 * MINUTE), closed_at: null };

  it('takes the right code until 15 minutes after it was made, and not from that instant', () => {
    expect(codeAccepted(row, '042042', new Date(made.getTime() + 15 * MINUTE - 1), hasher)).toBe(true);
    expect(codeAccepted(row, '042042', new Date(made.getTime() + 15 * MINUTE), hasher)).toBe(false);
    expect(codeAccepted(row, '042043', made, hasher)).toBe(false);
  });

  it('takes it at the fifth attempt, not at the sixth, nor once closed', () => {
    expect(codeAccepted({ ...row, attempts: MAX_CODE_ATTEMPTS }, '042042', made, hasher)).toBe(true);
    expect(codeAccepted({ ...row, attempts: MAX_CODE_ATTEMPTS + 1 }, '042042', made, hasher)).toBe(false);
    expect(codeAccepted({ ...row, closed_at: made }, '042042', made, hasher)).toBe(false);
  });

  it('refuses an unknown or closed link (400) and an expired one (410)', () => {
    const expires = new Date(made.getTime() + 30 * MINUTE);
    expect(tokenRefusal({ token_expires_at: expires, closed_at: null }, new Date(expires.getTime() - 1))).toBeUndefined();
    expect(tokenRefusal({ token_expires_at: expires, closed_at: null }, expires)).toMatchObject({ code: 'expired', status: 410 });
    expect(tokenRefusal({ token_expires_at: expires, closed_at: made }, made)).toMatchObject({ code: 'invalid_code', status: 400 });
    expect(tokenRefusal(undefined, made)).toMatchObject({ code: 'invalid_code' });
  });
});

describe('OneTimeCodes', () => {
  it('makes a 6-digit code and a link token, stores only their hashes, and links into the app with the token in the fragment', async () => {
    const { store, issue, clock } = setup();
    const issued = await issue('email_verification');
    expect(issued.code).toMatch(/^\d{6}$/);
    expect(issued.token).toMatch(/^mrv_[A-Za-z0-9_-]{43}$/);
    expect(issued.link).toBe(`https://app.example.com/verify-email#token=${issued.token}`);
    expect(issued.code_expires_at).toBe(new Date(clock.now().getTime() + 15 * MINUTE).toISOString());
    expect(issued.link_expires_at).toBe(new Date(clock.now().getTime() + CODE_POLICY.email_verification.tokenTtlMs).toISOString());
    const [row] = store.codes;
    expect(row).toMatchObject({ purpose: 'email_verification', email: 'ada@example.com', attempts: 0, closed_at: null });
    expect(JSON.stringify(store.codes)).not.toContain(issued.token);
    expect(row!.code_hash).toEqual(hasher.code(row!.id, issued.code));
    expect((await issue('password_reset')).link).toMatch(/^https:\/\/app\.example\.com\/reset-password#token=mrp_/);
  });

  it('checks a code against the one account of the address; 5 attempts, then even the right code is refused', async () => {
    const { codes, issue } = setup();
    const { code } = await issue();
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) await expect(codes.byCode('password_reset', 'ada@example.com', other(code))).rejects.toMatchObject({ code: 'invalid_code' });
    // The fifth attempt is still one.
    expect((await codes.byCode('password_reset', 'ada@example.com', code)).attempts).toBe(MAX_CODE_ATTEMPTS);

    const again = setup();
    const second = await again.issue();
    for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) await expect(again.codes.byCode('password_reset', 'ada@example.com', other(second.code))).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(again.codes.byCode('password_reset', 'ada@example.com', second.code)).rejects.toMatchObject({ code: 'invalid_code' });
    // A dead code is not written to again: attempts at it cost what attempts at an unknown address do.
    expect(again.store.codes[0]!.attempts).toBe(MAX_CODE_ATTEMPTS);
    // The link of the same mail still works: guesses at the code do not lock the person out of it.
    expect((await again.codes.byToken('password_reset', second.token)).id).toBe(again.store.codes[0]!.id);
  });

  it('answers every failure of a code alike: unknown address, no code, other purpose, wrong, expired', async () => {
    const { codes, issue, clock } = setup();
    const { code } = await issue();
    const failures = [
      codes.byCode('password_reset', 'nobody@example.com', code),
      codes.byCode('email_verification', 'ada@example.com', code),
      codes.byCode('password_reset', 'ada@example.com', other(code)),
    ];
    clock.advance(15 * MINUTE);
    failures.push(codes.byCode('password_reset', 'ada@example.com', code));
    const errors = await Promise.all(failures.map((p) => p.then(() => undefined, (err: unknown) => err)));
    expect(new Set(errors.map((e) => JSON.stringify([e instanceof Error && 'code' in e ? e.code : e, e instanceof Error ? e.message : ''])))).toEqual(
      new Set([JSON.stringify(['invalid_code', 'the code is wrong, expired, used, or was tried 5 times already; ask for a new mail'])]),
    );
  });

  it('takes the right code within 15 minutes, not at 15', async () => {
    const early = setup();
    const a = await early.issue();
    early.clock.advance(15 * MINUTE - 1);
    await expect(early.codes.byCode('password_reset', 'ada@example.com', a.code)).resolves.toMatchObject({ email: 'ada@example.com' });
    const late = setup();
    const b = await late.issue();
    late.clock.advance(15 * MINUTE);
    await expect(late.codes.byCode('password_reset', 'ada@example.com', b.code)).rejects.toMatchObject({ code: 'invalid_code' });
  });

  it('uses a code or link once; a newer mail replaces the older one', async () => {
    const { codes, issue, store } = setup();
    const first = await issue();
    const second = await issue();
    expect(store.codes.map((c) => c.closed_reason)).toEqual(['replaced', null]);
    await expect(codes.byToken('password_reset', first.token)).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(codes.byCode('password_reset', 'ada@example.com', first.code === second.code ? other(first.code) : first.code)).rejects.toMatchObject({ code: 'invalid_code' });
    const row = await codes.byToken('password_reset', second.token);
    await memoryTransact((tx) => codes.use(tx, row));
    // A second use of the same row (two requests at once) is refused at the write.
    await expect(memoryTransact((tx) => codes.use(tx, row))).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(codes.byToken('password_reset', second.token)).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(codes.byCode('password_reset', 'ada@example.com', second.code)).rejects.toMatchObject({ code: 'invalid_code' });
  });

  it('says how long until a new code may be made, from the codes made', async () => {
    const { codes, issue, clock } = setup();
    expect(await codes.wait('usr_ada', 'password_reset')).toBeUndefined();
    await issue();
    clock.advance(20_000);
    expect(await codes.wait('usr_ada', 'password_reset')).toBe(40);
    expect(await codes.wait('usr_ada', 'email_verification')).toBeUndefined();
    clock.advance(40_000);
    expect(await codes.wait('usr_ada', 'password_reset')).toBeUndefined();
  });
});
