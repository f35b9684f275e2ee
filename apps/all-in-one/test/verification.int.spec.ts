/**
 * Email verification and passwords over HTTP, as people use them: the verification mail of a
 * signup (read from the test relay, our provider here: from the system address, DKIM-signed
 * with MAIL_DOMAIN's published key) carries a code and a link; either verifies, once; a code
 * dies after 5 wrong attempts. An unverified person may not invite. A forgotten password is
 * reset from its mail: the old sessions are refused within a second, the new password logs
 * in. Asking for a reset answers an unknown address exactly as a known one. A signed-in
 * person changes their password: the other sessions end, theirs goes on. An address whose
 * verification mail bounced is not mailed again.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { simpleParser, type ParsedMail } from 'mailparser';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { freePort, startTestRelay, waitFor, type ApiResponse, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const APP_URL = 'https://app.agents.test';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  // Addresses at gone.example do not exist: the relay takes the mail, then reports it failed (a DSN to our VERP address).
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: (a) => (a.endsWith('@gone.example') ? 'bounce' : 'deliver') });
});
// People sign up here through the API as anyone would: their addresses start unverified.
const { anon, env, dns } = usePlatform({
  tenant: false,
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
    APP_URL,
  }),
  dns: [{ name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}` }],
});
afterAll(async () => {
  await relay?.close();
});

const PASSWORD = 'correct horse battery';
let people = 0;
const fresh = () => `person-${++people}-${Date.now()}@example.com`;
/** Access tokens of revoked sessions are refused within a second (the revocation fact). */
const bound = { timeoutMs: 1_000, intervalMs: 25 };

async function signUp(email = fresh()): Promise<{ email: string; access: string; refresh: string }> {
  const res = await anon.post('/api/v1/auth/signup', { email, password: PASSWORD });
  expect([res.status, res.body.user?.email_verified]).toEqual([201, false]);
  return { email, access: res.body.access_token, refresh: res.body.refresh_token };
}

async function logIn(email: string, password = PASSWORD): Promise<ApiResponse> {
  return anon.post('/api/v1/auth/login', { email, password });
}

/** The n-th mail of a template to `to`, parsed, once the relay has it; checked to come from the system address, DKIM-signed. */
async function mailTo(to: string, template: string, n = 1): Promise<ParsedMail & { code: string; token: string }> {
  const mails = await waitFor(
    () => {
      const found = relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`));
      return found.length >= n && found;
    },
    { timeoutMs: 20_000, what: `${template} mail ${n} to ${to}` },
  );
  const raw = mails[n - 1]!.raw;
  const parsed = await simpleParser(raw);
  expect(parsed.from?.value).toEqual([{ address: `no-reply@${DOMAIN}`, name: 'Mailroom' }]);
  const resolver = new Resolver();
  resolver.setServers([dns.servers]);
  const verdict = await dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
  expect(verdict.results.map((r) => [r.signingDomain, r.status.result])).toEqual([[DOMAIN, 'pass']]);
  const text = parsed.text ?? '';
  return Object.assign(parsed, { code: /Your code is (\d{6})\./.exec(text)?.[1] ?? '', token: /mr[vp]_[A-Za-z0-9_-]{43}/.exec(text)?.[0] ?? '' });
}

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

/** Status, code and message of an error answer: two answers compare equal when only their request ids differ. */
const refusal = (res: ApiResponse) => [res.status, res.body?.error?.code, res.body?.error?.message];

/** Runs SQL on the run's database (to move a code's time back instead of waiting). */
async function onDatabase(run: (db: Kysely<unknown>) => Promise<unknown>): Promise<void> {
  const db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
  try {
    await run(db);
  } finally {
    await db.destroy();
  }
}

describe('email verification', () => {
  it('mails a code at signup; the code verifies the address, once; only then may the person invite', async () => {
    const ada = await signUp();
    const mail = await mailTo(ada.email, 'email_verification');
    expect(mail.subject).toBe(`Your Mailroom verification code: ${mail.code}`);
    expect(mail.code).toMatch(/^\d{6}$/);
    expect(mail.text).toContain(`${APP_URL}/verify-email#token=${mail.token}`);
    expect(mail.html).toContain(`<a href="${APP_URL}/verify-email#token=${mail.token}">`);

    const me = anon.withToken(ada.access);
    const invite = { email: 'colleague@example.com', role: 'member' };
    const early = await me.post('/api/v1/org/invitations', invite);
    expect(refusal(early)).toEqual([403, 'email_unverified', expect.stringMatching(/verify your email address before inviting/)]);

    const verified = await anon.post('/api/v1/auth/verify-email', { email: ada.email.toUpperCase(), code: mail.code });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ email: ada.email, email_verified: true });
    expect((await me.get('/api/v1/user/me')).body.email_verified).toBe(true);
    expect((await me.post('/api/v1/org/invitations', invite)).status).toBe(201);

    const again = await anon.post('/api/v1/auth/verify-email', { email: ada.email, code: mail.code });
    expect(refusal(again)).toEqual([400, 'invalid_code', expect.any(String)]);
    expect(refusal(await me.post('/api/v1/user/me/verify-email/resend'))).toEqual([409, 'conflict', expect.stringMatching(/verified already/)]);
  });

  it('kills a code after 5 wrong attempts (the right one then fails too), and answers an unknown address alike', async () => {
    const bob = await signUp();
    const { code } = await mailTo(bob.email, 'email_verification');
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 5; i++) answers.push(await anon.post('/api/v1/auth/verify-email', { email: bob.email, code: wrongCode(code) }));
    answers.push(await anon.post('/api/v1/auth/verify-email', { email: bob.email, code }));
    answers.push(await anon.post('/api/v1/auth/verify-email', { email: 'nobody-here@example.com', code }));
    const first = refusal(answers[0]!);
    expect(first).toEqual([400, 'invalid_code', expect.stringMatching(/wrong, expired, used, or was tried 5 times/)]);
    for (const res of answers) expect(refusal(res)).toEqual(first);
    expect((await anon.withToken(bob.access).get('/api/v1/user/me')).body.email_verified).toBe(false);
  });

  it('sends another mail on demand, at most once a minute; its link token verifies', async () => {
    const cleo = await signUp();
    const first = await mailTo(cleo.email, 'email_verification');
    const me = anon.withToken(cleo.access);
    const soon = await me.post('/api/v1/user/me/verify-email/resend');
    expect(refusal(soon)).toEqual([429, 'rate_limited', expect.stringMatching(/at most one a minute/)]);
    expect(Number(soon.headers.get('retry-after'))).toBeGreaterThan(0);
    // A minute later (moved back in the database rather than waited for).
    await onDatabase((db) => sql`update auth.one_time_codes set created_at = created_at - interval '2 minutes' where email = ${cleo.email}`.execute(db));
    const resent = await me.post('/api/v1/user/me/verify-email/resend');
    expect([resent.status, resent.body]).toEqual([202, {}]);
    const second = await mailTo(cleo.email, 'email_verification', 2);
    expect(second.token).not.toBe(first.token);
    // The first mail was replaced.
    expect(refusal(await anon.post('/api/v1/auth/verify-email', { token: first.token }))).toEqual([400, 'invalid_code', expect.stringMatching(/newer mail replaced it/)]);
    const verified = await anon.post('/api/v1/auth/verify-email', { token: second.token });
    expect([verified.status, verified.body.email_verified]).toEqual([200, true]);
  });

  it('refuses malformed requests with 400 and says what to give', async () => {
    const token = `mrv_${'x'.repeat(43)}`;
    const cases: [unknown, string][] = [
      [{}, 'body.code'],
      [{ code: '123456' }, 'body.email'],
      [{ email: 'a@example.com', code: '12345' }, 'body.code'],
      [{ token, email: 'a@example.com', code: '123456' }, 'body.token'],
      [{ token: 'mrp_' + 'x'.repeat(43) }, 'body.token'],
      [{ token, extra: 1 }, 'body'],
    ];
    for (const [body, path] of cases) {
      const res = await anon.post('/api/v1/auth/verify-email', body);
      expect([JSON.stringify(body), res.status, res.body.error.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect(refusal(await anon.post('/api/v1/auth/verify-email', { token }))).toEqual([400, 'invalid_code', expect.any(String)]);
  });
});

describe('password reset', () => {
  it('answers a request for an unknown address exactly as for a known one', async () => {
    const dan = await signUp();
    const known = await anon.post('/api/v1/auth/password/reset-request', { email: dan.email });
    const unknown = await anon.post('/api/v1/auth/password/reset-request', { email: 'nobody-at-all@example.com' });
    expect(known.status).toBe(202);
    expect([unknown.status, unknown.text, unknown.headers.get('content-type')]).toEqual([known.status, known.text, known.headers.get('content-type')]);
    await mailTo(dan.email, 'password_reset');
    // Asked again within the minute: the same answer, and no second mail.
    const again = await anon.post('/api/v1/auth/password/reset-request', { email: dan.email });
    expect([again.status, again.text]).toEqual([known.status, known.text]);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(relay.received.filter((m) => m.rcptTo.includes('nobody-at-all@example.com'))).toEqual([]);
    expect(relay.received.filter((m) => m.rcptTo.includes(dan.email) && m.raw.toString('latin1').includes('X-Mailroom-Template: password_reset'))).toHaveLength(1);
  });

  it('resets a forgotten password from the mail: every old session is refused within a second, the new password logs in', async () => {
    const eve = await signUp();
    const phone = (await logIn(eve.email)).body;
    await anon.post('/api/v1/auth/password/reset-request', { email: eve.email });
    const mail = await mailTo(eve.email, 'password_reset');
    expect(mail.subject).toBe('Reset your Mailroom password');
    expect(mail.text).toContain(`${APP_URL}/reset-password#token=${mail.token}`);

    // The signup's rules for the new password; the code is not spent by a refused request.
    const short = await anon.post('/api/v1/auth/password/reset', { email: eve.email, code: mail.code, new_password: 'short' });
    expect([short.status, short.body.error.code, short.body.error.details[0].path]).toEqual([400, 'invalid_request', 'body.new_password']);
    const reset = await anon.post('/api/v1/auth/password/reset', { email: eve.email, code: mail.code, new_password: 'a brand new password' });
    expect(reset.status).toBe(204);

    for (const access of [eve.access, phone.access_token]) {
      await waitFor(async () => (await anon.withToken(access).get('/api/v1/user/me')).status === 401, { ...bound, what: 'an old session refused' });
    }
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: eve.refresh })).status).toBe(401);
    expect(refusal(await logIn(eve.email))).toEqual([401, 'invalid_credentials', expect.any(String)]);
    const fresh = await logIn(eve.email, 'a brand new password');
    expect(fresh.status).toBe(200);
    // The mail reached the address: it counts as verified.
    expect(fresh.body.user.email_verified).toBe(true);
    const notice = await mailTo(eve.email, 'password_changed');
    expect(notice.text).toMatch(/was reset with a code or link sent to this address/);
    // The code and the link of that mail work once.
    expect(refusal(await anon.post('/api/v1/auth/password/reset', { token: mail.token, new_password: 'yet another password' }))).toEqual([400, 'invalid_code', expect.any(String)]);
  });

  it('resets with the link token, and refuses a code after 5 wrong attempts', async () => {
    const fay = await signUp();
    await anon.post('/api/v1/auth/password/reset-request', { email: fay.email });
    const { code, token } = await mailTo(fay.email, 'password_reset');
    for (let i = 0; i < 5; i++) {
      const res = await anon.post('/api/v1/auth/password/reset', { email: fay.email, code: wrongCode(code), new_password: 'a brand new password' });
      expect(refusal(res)).toEqual([400, 'invalid_code', expect.any(String)]);
    }
    expect(refusal(await anon.post('/api/v1/auth/password/reset', { email: fay.email, code, new_password: 'a brand new password' }))).toEqual([400, 'invalid_code', expect.any(String)]);
    expect((await logIn(fay.email)).status).toBe(200);
    expect((await anon.post('/api/v1/auth/password/reset', { token, new_password: 'a brand new password' })).status).toBe(204);
    expect((await logIn(fay.email, 'a brand new password')).status).toBe(200);
  });
});

describe('changing the password signed in', () => {
  it('needs the current password; ends every other session, this one goes on', async () => {
    const gus = await signUp();
    const laptop = (await logIn(gus.email)).body;
    const me = anon.withToken(gus.access);
    const wrong = await me.post('/api/v1/user/me/change-password', { current_password: 'not it', new_password: 'a brand new password' });
    expect([wrong.status, wrong.body.error.code, wrong.body.error.details]).toEqual([403, 'forbidden', [{ path: 'body.current_password', message: 'is incorrect' }]]);
    expect(refusal(await me.post('/api/v1/user/me/change-password', { current_password: PASSWORD, new_password: 'short' }))).toEqual([400, 'invalid_request', expect.any(String)]);
    const tenant = await signUp();
    const key = await anon.post('/api/v1/keys', { name: 'agent' }, { token: tenant.access });
    expect((await anon.withToken(key.body.key).post('/api/v1/user/me/change-password', { current_password: PASSWORD, new_password: 'a brand new password' })).status).toBe(403);

    expect((await me.post('/api/v1/user/me/change-password', { current_password: PASSWORD, new_password: 'a brand new password' })).status).toBe(204);
    await waitFor(async () => (await anon.withToken(laptop.access_token).get('/api/v1/user/me')).status === 401, { ...bound, what: 'the other session refused' });
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: laptop.refresh_token })).status).toBe(401);
    expect((await me.get('/api/v1/user/me')).status).toBe(200);
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: gus.refresh })).status).toBe(200);
    expect((await logIn(gus.email, 'a brand new password')).status).toBe(200);
    expect((await mailTo(gus.email, 'password_changed')).text).toMatch(/changed by someone signed in to it/);
  });
});

describe('platform mail that bounces', () => {
  /** Status of the platform's mails of `template` to `to`, from mail-send's record. */
  async function statuses(to: string, template: string): Promise<string[]> {
    let rows: { status: string }[] = [];
    await onDatabase(async (db) => {
      rows = (await sql<{ status: string }>`select status from mail_send.system_mails where to_address = ${to} and template = ${template}`.execute(db)).rows;
    });
    return rows.map((r) => r.status);
  }

  it('marks a verification mail that bounced, and mails the address nothing more (a reset request sends nothing)', async () => {
    const email = `nobody-${Date.now()}@gone.example`;
    await signUp(email);
    await waitFor(async () => (await statuses(email, 'email_verification')).join() === 'bounced', { timeoutMs: 20_000, what: 'the verification mail bounced' });
    expect(relay.reportsSent.filter((r) => r.to.includes('bounces+sml_') && r.action === 'failed')).not.toHaveLength(0);

    expect((await anon.post('/api/v1/auth/password/reset-request', { email })).status).toBe(202);
    await waitFor(async () => (await statuses(email, 'password_reset')).join() === 'suppressed', { timeoutMs: 20_000, what: 'the reset mail suppressed' });
    expect(relay.received.filter((m) => m.rcptTo.includes(email))).toHaveLength(1);
  });
});
