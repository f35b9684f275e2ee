/**
 * Brute force over HTTP, as a botnet and an account's owner see it. 100 wrong passwords for
 * one email from 20 addresses, 5 each: the first 10 are answered 401, every later one 429 with
 * Retry-After, and so is the right password, until the lock ends; the owner gets one notice
 * mail. An email without an account is answered exactly alike (status, body but for the request
 * id, headers) and gets no mail. The codes of reset and verification mails are capped per email
 * across mails the same way; asking for a reset answers every email alike.
 *
 * The gateway trusts X-Forwarded-For here (TRUST_PROXY), so the test speaks from many
 * addresses; the gateway's own per-address limit stays on (5 or so requests per address are
 * far below it). The platform runs on the test's clock: a lock ends when the test moves it on.
 */
import { ManualClock } from '@mailroom/platform';
import { simpleParser, type ParsedMail } from 'mailparser';
import { freePort, startTestRelay, waitFor, type ApiResponse, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const clock = new ManualClock(new Date());
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const { anon } = usePlatform({
  clock,
  tenant: false,
  env: () => ({ TRUST_PROXY: 'true', SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url }),
});
afterAll(async () => {
  await relay?.close();
});

const PASSWORD = 'correct horse battery';
const LOCK_SECONDS = 900;
let people = 0;
const fresh = (what = 'person') => `${what}-${++people}-${Date.now()}@example.com`;

/** Requests of the test itself (sign-ups, mails asked for, codes tried) come from addresses of their own, a few each. */
let sent = 0;
const from = (address = `192.0.2.${(++sent % 250) + 1}`) => ({ headers: { 'x-forwarded-for': address } });
const post = (path: string, body: unknown, address?: string) => anon.post(path, body, from(address));

async function signUp(email = fresh()): Promise<{ email: string; access: string }> {
  const res = await post('/api/v1/auth/signup', { email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { email, access: res.body.access_token };
}

/** An answer as a client sees it, but for what differs between any two requests (the request id, the date). */
function seen(res: ApiResponse): string {
  const headers = [...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id').sort();
  const body = res.body?.error ? { error: { ...res.body.error, request_id: '(request id)' } } : res.body;
  return JSON.stringify({ status: res.status, headers, body });
}

/** Mails of a template to `to` that the relay has. */
const mailsTo = (to: string, template: string) => relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`));

/** The n-th mail of a template to `to`, parsed, once the relay has it; with its code and token. */
async function mailTo(to: string, template: string, n = 1): Promise<ParsedMail & { code: string; token: string }> {
  const mails = await waitFor(() => mailsTo(to, template).length >= n && mailsTo(to, template), { timeoutMs: 20_000, what: `${template} mail ${n} to ${to}` });
  const parsed = await simpleParser(mails[n - 1]!.raw);
  const text = parsed.text ?? '';
  return Object.assign(parsed, { code: /Your code is (\d{6})\./.exec(text)?.[1] ?? '', token: /mr[vp]_[A-Za-z0-9_-]{43}/.exec(text)?.[0] ?? '' });
}

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

/** 100 wrong passwords for `email`: 20 addresses of `subnet` at once, 5 each, one after another. */
async function guessFrom20Addresses(email: string, subnet: string): Promise<ApiResponse[]> {
  const perAddress = await Promise.all(
    Array.from({ length: 20 }, async (_, a) => {
      const answers: ApiResponse[] = [];
      for (let i = 0; i < 5; i++) answers.push(await post('/api/v1/auth/login', { email, password: `guess ${a}-${i}` }, `${subnet}.${a + 1}`));
      return answers;
    }),
  );
  return perAddress.flat();
}

describe('login under brute force', () => {
  it('locks an email after 10 wrong passwords from any number of addresses, refuses the right one with Retry-After until the lock ends, and tells the owner once', async () => {
    const owner = await signUp();
    const stranger = fresh('nobody');

    const guesses = await guessFrom20Addresses(owner.email, '198.51.100');
    const counts = (answers: ApiResponse[]) => answers.reduce<Record<number, number>>((c, r) => ({ ...c, [r.status]: (c[r.status] ?? 0) + 1 }), {});
    expect(counts(guesses)).toEqual({ 401: 10, 429: 90 });
    const locked = guesses.find((r) => r.status === 429)!;
    expect(locked.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/^too many failed sign-ins for this email; sign-in is refused for 900 s, even with the right password/) });
    expect(locked.headers.get('retry-after')).toBe(String(LOCK_SECONDS));

    // The same botnet on an email nobody has: the same answers, to the byte but for request ids and dates.
    const strangerGuesses = await guessFrom20Addresses(stranger, '203.0.113');
    expect(strangerGuesses.map(seen).sort()).toEqual(guesses.map(seen).sort());

    // The owner, from an address never seen, with the right password: refused, told when to come back.
    const right = await post('/api/v1/auth/login', { email: owner.email, password: PASSWORD }, '192.0.2.251');
    expect([right.status, right.body.error.code, right.headers.get('retry-after')]).toEqual([429, 'rate_limited', String(LOCK_SECONDS)]);
    expect(seen(await post('/api/v1/auth/login', { email: stranger, password: PASSWORD }, '192.0.2.252'))).toBe(seen(right));

    const notice = await mailTo(owner.email, 'account_locked');
    expect(notice.subject).toBe('Your Mailroom account: sign-in locked after failed attempts');
    expect(notice.text).toContain('There were 10 failed sign-ins for the Mailroom account of this address');
    expect(notice.text).toContain('POST /api/v1/auth/password/reset-request');
    expect(notice.html).toContain('<code>POST /api/v1/auth/password/reset-request</code>');
    // A mail asked for after the lock arrives after its notice: by then, one notice, and none to the stranger.
    await post('/api/v1/auth/password/reset-request', { email: owner.email });
    await mailTo(owner.email, 'password_reset');
    expect(mailsTo(owner.email, 'account_locked')).toHaveLength(1);
    expect(relay.received.filter((m) => m.rcptTo.includes(stranger))).toEqual([]);

    clock.advance(LOCK_SECONDS * 1000);
    const welcome = await post('/api/v1/auth/login', { email: owner.email, password: PASSWORD });
    expect([welcome.status, welcome.body.user.email]).toEqual([200, owner.email]);
    expect((await post('/api/v1/auth/login', { email: stranger, password: PASSWORD })).status).toBe(401);
  });
});

describe('mailed codes under brute force', () => {
  it('caps wrong reset codes per email across mails, an unknown email alike; the link of the mail still resets', async () => {
    const owner = await signUp();
    const stranger = fresh('nobody');
    const reset = (email: string, code: string) => post('/api/v1/auth/password/reset', { email, code, new_password: 'a brand new password' });
    const pairs: [ApiResponse, ApiResponse][] = [];
    let last = { code: '', token: '' };
    for (let mail = 1; mail <= 3; mail++) {
      const asked = [await post('/api/v1/auth/password/reset-request', { email: owner.email }), await post('/api/v1/auth/password/reset-request', { email: stranger })];
      expect(asked.map(seen)).toEqual([seen(asked[0]!), seen(asked[0]!)]);
      expect(asked[0]!.status).toBe(202);
      last = await mailTo(owner.email, 'password_reset', mail);
      // Two mails' worth of wrong codes (5 each, the most one code takes), then the right code of the third.
      const codes = mail < 3 ? Array(5).fill(wrongCode(last.code)) : [last.code];
      for (const code of codes) pairs.push([await reset(owner.email, code), await reset(stranger, code)]);
      clock.advance(60_000); // a new mail may be made a minute after the last
    }
    expect(pairs.map(([mine]) => mine.status)).toEqual([...Array(10).fill(400), 429]);
    expect(pairs.at(-1)![0].headers.get('retry-after')).toBe(String(LOCK_SECONDS - 60));
    for (const [mine, theirs] of pairs) expect(seen(theirs)).toBe(seen(mine));

    expect((await post('/api/v1/auth/password/reset', { token: last.token, new_password: 'a brand new password' })).status).toBe(204);
    expect((await post('/api/v1/auth/login', { email: owner.email, password: 'a brand new password' })).status).toBe(200);
    expect((await mailTo(owner.email, 'account_locked')).subject).toBe('Your Mailroom account: reset codes locked after wrong attempts');
  });

  it('caps wrong verification codes per email across mails, an unknown email alike; the link of the mail still verifies', async () => {
    const owner = await signUp();
    const stranger = fresh('nobody');
    const verify = (email: string, code: string) => post('/api/v1/auth/verify-email', { email, code });
    const first = await mailTo(owner.email, 'email_verification');
    const pairs: [ApiResponse, ApiResponse][] = [];
    for (let i = 0; i < 10; i++) pairs.push([await verify(owner.email, wrongCode(first.code)), await verify(stranger, wrongCode(first.code))]);
    clock.advance(60_000);
    expect((await anon.withToken(owner.access).post('/api/v1/user/me/verify-email/resend', undefined, from())).status).toBe(202);
    const second = await mailTo(owner.email, 'email_verification', 2);
    pairs.push([await verify(owner.email, second.code), await verify(stranger, second.code)]);
    expect(pairs.map(([mine]) => mine.status)).toEqual([...Array(10).fill(400), 429]);
    expect(pairs.at(-1)![0].body.error.message).toMatch(/The link of the verification mail still works$/);
    for (const [mine, theirs] of pairs) expect(seen(theirs)).toBe(seen(mine));

    const verified = await post('/api/v1/auth/verify-email', { token: second.token });
    expect([verified.status, verified.body.email_verified]).toEqual([200, true]);
  });
});
