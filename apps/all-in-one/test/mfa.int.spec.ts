/**
 * The second factor over HTTP, as people use it: a person enrols, reads the secret into their
 * "authenticator" (the test computes its codes with otpauth from the secret the API answered,
 * at the real time), confirms, and gets ten recovery codes. Login then answers mfa_required
 * and a token; verify-login with a wrong code is 401, with a current code gives tokens that
 * work, and the same code is refused a second time; a recovery code works once; another
 * person's code or token proves nothing; a token dies after 5 attempts. New recovery codes,
 * and MFA turned off. Every notice (MFA on and off, a recovery code used, new codes, a
 * sign-in from a new client) arrives at the test relay as a mail.
 *
 * The gateway trusts X-Forwarded-For here (TRUST_PROXY), so a test says where a client is.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { simpleParser, type ParsedMail } from 'mailparser';
import { freePort, startTestRelay, waitFor, type ApiResponse, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
// Many sign-ins from few addresses: the per-address limit of anonymous requests is off.
const { anon } = usePlatform({
  tenant: false,
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    TRUST_PROXY: 'true',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
  }),
});
afterAll(async () => {
  await relay?.close();
});

const PASSWORD = 'correct horse battery';
/** Where each person usually works from, and a client none of them has used. */
const LAPTOP = { 'user-agent': 'mailroom-cli/1.4.0', 'x-forwarded-for': '198.51.100.10' };
const ELSEWHERE = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0', 'x-forwarded-for': '203.0.113.50' };
let people = 0;
const fresh = () => `mfa-${++people}-${Date.now()}@example.com`;

/** Status, code and message of an error answer. */
const refusal = (res: ApiResponse) => [res.status, res.body?.error?.code, res.body?.error?.message];

/** The authenticator: the code of a time step (30 s since the epoch) of a secret, and the step of now. */
const stepNow = () => OTPAuth.TOTP.counter({ timestamp: Date.now() });
const codeOfStep = (secret: string, step: number) => OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: step * 30_000 });
/** A 6-digit code that is none of the secret's codes for the steps given (a wrong code on every run). */
const notACode = (secret: string, steps: number[]) => {
  const codes = new Set(steps.map((s) => codeOfStep(secret, s)));
  return ['000000', '111111', '222222', '333333'].find((c) => !codes.has(c))!;
};

interface Person {
  email: string;
  access: string;
}

async function signUp(): Promise<Person> {
  const email = fresh();
  const res = await anon.post('/api/v1/auth/signup', { email, password: PASSWORD }, { headers: LAPTOP });
  expect(res.status).toBe(201);
  return { email, access: res.body.access_token };
}

const logIn = (email: string, headers: Record<string, string> = LAPTOP, password = PASSWORD) => anon.post('/api/v1/auth/login', { email, password }, { headers });
const verifyLogin = (body: { mfa_token: string; code: string }, headers: Record<string, string> = LAPTOP) => anon.post('/api/v1/auth/mfa/verify-login', body, { headers });

/** Enrols and confirms with the code of now; answers the secret, the step the confirmation spent and the recovery codes. */
async function turnOn(person: Person): Promise<{ secret: string; spent: number; codes: string[] }> {
  const me = anon.withToken(person.access);
  const enrolled = await me.post('/api/v1/user/me/mfa/enrol');
  expect(enrolled.status).toBe(200);
  const { secret } = enrolled.body;
  const step = stepNow();
  const confirmed = await me.post('/api/v1/user/me/mfa/confirm', { code: codeOfStep(secret, step) });
  expect(confirmed.status).toBe(200);
  return { secret, spent: step, codes: confirmed.body.recovery_codes };
}

/** The n-th mail of a template to `to`, parsed, once the relay has it. */
async function mailTo(to: string, template: string, n = 1): Promise<ParsedMail> {
  const mails = await waitFor(
    () => {
      const found = relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`));
      return found.length >= n && found;
    },
    { timeoutMs: 20_000, what: `${template} mail ${n} to ${to}` },
  );
  const parsed = await simpleParser(mails[n - 1]!.raw);
  expect(parsed.from?.value).toEqual([{ address: `no-reply@${DOMAIN}`, name: 'Mailroom' }]);
  return parsed;
}
const mailsTo = (to: string, template: string) => relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`)).length;

describe('MFA', () => {
  it('enrols, confirms, then asks every login for a code: once per code, a recovery code once, never another person\'s', async () => {
    const ada = await signUp();
    const me = anon.withToken(ada.access);
    expect((await me.get('/api/v1/user/me/mfa')).body).toEqual({ enabled: false, enabled_at: null, enrolment_pending: false, recovery_codes_left: 0 });

    // Enrolment: the secret as a key URI and in base32, the same secret in both.
    const enrolled = await me.post('/api/v1/user/me/mfa/enrol');
    expect(enrolled.body).toEqual({ otpauth_uri: expect.stringMatching(/^otpauth:\/\/totp\/Mailroom:/), secret: expect.stringMatching(/^[A-Z2-7]{32}$/), algorithm: 'SHA1', digits: 6, period: 30 });
    const fromUri = OTPAuth.URI.parse(enrolled.body.otpauth_uri);
    if (!(fromUri instanceof OTPAuth.TOTP)) throw new Error(`not a TOTP key URI: ${enrolled.body.otpauth_uri}`);
    expect([fromUri.secret.base32, fromUri.issuer, fromUri.label, fromUri.algorithm, fromUri.digits, fromUri.period]).toEqual([enrolled.body.secret, 'Mailroom', ada.email, 'SHA1', 6, 30]);
    expect((await me.get('/api/v1/user/me/mfa')).body.enrolment_pending).toBe(true);
    const secret: string = enrolled.body.secret;

    // Confirmation: a wrong code is 403, a current one turns MFA on and answers the recovery codes once.
    const confirmStep = stepNow();
    const wrongConfirm = await me.post('/api/v1/user/me/mfa/confirm', { code: notACode(secret, [confirmStep - 1, confirmStep, confirmStep + 1, confirmStep + 2]) });
    expect([wrongConfirm.status, wrongConfirm.body.error.code, wrongConfirm.body.error.details[0].path]).toEqual([403, 'forbidden', 'body.code']);
    const confirmed = await me.post('/api/v1/user/me/mfa/confirm', { code: codeOfStep(secret, confirmStep) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ enabled: true, enabled_at: expect.any(String), recovery_codes: expect.any(Array) });
    const recovery: string[] = confirmed.body.recovery_codes;
    expect(recovery).toHaveLength(10);
    for (const c of recovery) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    expect((await me.get('/api/v1/user/me/mfa')).body).toEqual({ enabled: true, enabled_at: confirmed.body.enabled_at, enrolment_pending: false, recovery_codes_left: 10 });
    expect(refusal(await me.post('/api/v1/user/me/mfa/enrol'))).toEqual([409, 'conflict', expect.stringMatching(/on already/)]);
    expect((await mailTo(ada.email, 'mfa_enabled')).text).toMatch(/turned on for your Mailroom account/);

    // Signed out, the password alone earns no session.
    expect((await me.post('/api/v1/auth/logout')).status).toBe(204);
    const first = await logIn(ada.email);
    expect([first.status, first.body]).toEqual([200, { mfa_required: true, mfa_token: expect.stringMatching(/^mrm_[A-Za-z0-9_-]{43}$/), expires_in: 300 }]);
    expect(refusal(await logIn(ada.email, LAPTOP, 'not the password'))).toEqual([401, 'invalid_credentials', expect.any(String)]);

    // A wrong code: 401, and the attempts left.
    const next = confirmStep + 1;
    const wrong = await verifyLogin({ mfa_token: first.body.mfa_token, code: notACode(secret, [next - 2, next - 1, next, next + 1]) });
    expect(refusal(wrong)).toEqual([401, 'invalid_credentials', expect.stringMatching(/4 more attempts with this mfa_token/)]);

    // Another person's code for Ada's token, and Ada's code for another person's token: refused.
    const bob = await signUp();
    const bobs = await turnOn(bob);
    const bobsCode = [bobs.spent + 1, bobs.spent + 2].map((s) => codeOfStep(bobs.secret, s)).find((c) => ![next - 1, next, next + 1].some((s) => codeOfStep(secret, s) === c))!;
    expect(refusal(await verifyLogin({ mfa_token: first.body.mfa_token, code: bobsCode }))).toEqual([401, 'invalid_credentials', expect.any(String)]);
    const bobsToken = (await logIn(bob.email)).body.mfa_token;
    const adasCode = codeOfStep(secret, next);
    expect([next - 1, next, next + 1].map((s) => codeOfStep(bobs.secret, s))).not.toContain(adasCode);
    expect(refusal(await verifyLogin({ mfa_token: bobsToken, code: adasCode }))).toEqual([401, 'invalid_credentials', expect.any(String)]);

    // Ada's code with Ada's token: a session, with tokens that work.
    const verified = await verifyLogin({ mfa_token: first.body.mfa_token, code: adasCode });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ user: { email: ada.email }, token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.stringMatching(/^mrt_/) });
    expect((await anon.withToken(verified.body.access_token).get('/api/v1/user/me')).body.email).toBe(ada.email);
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: verified.body.refresh_token })).status).toBe(200);
    // The token is spent; the code too, even with a new token.
    expect(refusal(await verifyLogin({ mfa_token: first.body.mfa_token, code: adasCode }))).toEqual([401, 'unauthorized', expect.stringMatching(/log in again/)]);
    const second = await logIn(ada.email);
    expect(refusal(await verifyLogin({ mfa_token: second.body.mfa_token, code: adasCode }))).toEqual([401, 'invalid_credentials', expect.any(String)]);

    // A recovery code, from a client Ada has not used: a session, once; she is told of both.
    const fromElsewhere = await logIn(ada.email, ELSEWHERE);
    const byRecovery = await verifyLogin({ mfa_token: fromElsewhere.body.mfa_token, code: recovery[0]!.toUpperCase() }, ELSEWHERE);
    expect(byRecovery.status).toBe(200);
    expect((await mailTo(ada.email, 'mfa_recovery_code_used')).text).toMatch(/9 codes are left/);
    const notice = await mailTo(ada.email, 'new_sign_in');
    expect(notice.subject).toBe('New sign-in to your Mailroom account');
    expect(notice.text).toContain('from Firefox on Linux');
    expect(notice.text).toContain('IP address: 203.0.113.50');
    expect(notice.text).toContain(`User agent: ${ELSEWHERE['user-agent']}`);
    expect(notice.text).toContain('POST /api/v1/user/me/sessions/revoke-all');
    const third = await logIn(ada.email);
    expect(refusal(await verifyLogin({ mfa_token: third.body.mfa_token, code: recovery[0]! }))).toEqual([401, 'invalid_credentials', expect.any(String)]);
    expect((await anon.withToken(byRecovery.body.access_token).get('/api/v1/user/me/mfa')).body.recovery_codes_left).toBe(9);

    // Five attempts, then the token is dead: a good code no longer helps (and is not spent).
    const around = stepNow();
    const guess = notACode(secret, [around - 2, around - 1, around, around + 1, around + 2]);
    for (let i = 0; i < 4; i++) expect((await verifyLogin({ mfa_token: third.body.mfa_token, code: guess })).status).toBe(401);
    expect(refusal(await verifyLogin({ mfa_token: third.body.mfa_token, code: recovery[1]! }))).toEqual([401, 'unauthorized', expect.stringMatching(/log in again/)]);

    // New recovery codes, proven with one of the old: the old ones stop working.
    const signedIn = anon.withToken(verified.body.access_token);
    const regenerated = await signedIn.post('/api/v1/user/me/mfa/recovery-codes', { code: recovery[1]! });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.recovery_codes).toHaveLength(10);
    await mailTo(ada.email, 'mfa_recovery_codes_regenerated');
    const fourth = await logIn(ada.email);
    expect(refusal(await verifyLogin({ mfa_token: fourth.body.mfa_token, code: recovery[2]! }))).toEqual([401, 'invalid_credentials', expect.any(String)]);
    expect((await verifyLogin({ mfa_token: fourth.body.mfa_token, code: regenerated.body.recovery_codes[0] })).status).toBe(200);

    // Off, with the password (a wrong one is 403); then the password alone logs in again.
    expect(refusal(await signedIn.request('DELETE', '/api/v1/user/me/mfa', { password: 'not the password' }))).toEqual([403, 'forbidden', expect.any(String)]);
    expect((await signedIn.request('DELETE', '/api/v1/user/me/mfa', { password: PASSWORD })).status).toBe(204);
    expect((await mailTo(ada.email, 'mfa_disabled')).text).toMatch(/turned off .* with the password/);
    expect(refusal(await signedIn.request('DELETE', '/api/v1/user/me/mfa', { password: PASSWORD }))).toEqual([409, 'conflict', expect.any(String)]);
    const plain = await logIn(ada.email);
    expect([plain.status, plain.body.mfa_required, typeof plain.body.access_token]).toEqual([200, undefined, 'string']);
    // One new-sign-in notice in all: the laptop of the signup was never new (checked once every later mail is in).
    expect(mailsTo(ada.email, 'new_sign_in')).toBe(1);
  }, 60_000);

  it('refuses bad input with 400, and API keys with 403', async () => {
    const cy = await signUp();
    const me = anon.withToken(cy.access);
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/v1/user/me/mfa/confirm', { code: '12345' }, 'body.code'],
      ['POST', '/api/v1/user/me/mfa/confirm', { code: 'abcd-efgh-jkmn-pqrs' }, 'body.code'],
      ['DELETE', '/api/v1/user/me/mfa', {}, 'body.password'],
      ['DELETE', '/api/v1/user/me/mfa', { password: PASSWORD, code: '123456' }, 'body.password'],
      ['POST', '/api/v1/user/me/mfa/recovery-codes', { code: 'not a code' }, 'body.code'],
      ['POST', '/api/v1/auth/mfa/verify-login', { mfa_token: 'mrt_x', code: '123456' }, 'body.mfa_token'],
      ['POST', '/api/v1/auth/mfa/verify-login', { mfa_token: `mrm_${'A'.repeat(43)}`, code: '1234567' }, 'body.code'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = await me.request(method, path, body);
      expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 400, 'invalid_request']);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(where);
    }
    expect(refusal(await me.post('/api/v1/user/me/mfa/confirm', { code: '123456' }))).toEqual([409, 'conflict', expect.stringMatching(/no enrolment/)]);
    expect(refusal(await anon.post('/api/v1/auth/mfa/verify-login', { mfa_token: `mrm_${'A'.repeat(43)}`, code: '123456' }))).toEqual([401, 'unauthorized', expect.any(String)]);
    const key = await anon.post('/api/v1/keys', { name: 'agent' }, { token: cy.access });
    expect((await anon.withToken(key.body.key).get('/api/v1/user/me/mfa')).status).toBe(403);
  });
});
