/**
 * Changing one's email address over HTTP, as a person does: the password asked again; a code
 * and a link go to the new address, a notice to the old one (read from the test relay, from
 * the system address); nothing changes until the new address confirms, signed in; then the
 * address is the new one, verified, every other session is refused within a second, and the
 * person logs in with it. An address taken meanwhile is a 409 at confirmation.
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import { freePort, startTestRelay, waitFor, type ApiResponse, type Tenant, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const APP_URL = 'https://app.agents.test';
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const { anon, signUp } = usePlatform({
  tenant: false,
  env: () => ({ MAIL_DOMAIN: DOMAIN, SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url, APP_URL }),
});
afterAll(async () => {
  await relay?.close();
});

const bound = { timeoutMs: 1_000, intervalMs: 20 };
const as = (token: string) => anon.withToken(token);
const refusal = (res: ApiResponse) => [res.status, res.body?.error?.code, res.body?.error?.message];
let n = 0;
const fresh = () => `new-${++n}-${Date.now()}@example.com`;

/** The mail of a template to `to`, parsed, with the code and the token it carries. */
async function mailTo(to: string, template: string): Promise<ParsedMail & { code: string; token: string }> {
  const mail = await waitFor(() => relay.received.find((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`)), {
    timeoutMs: 20_000,
    what: `${template} mail to ${to}`,
  });
  const parsed = await simpleParser(mail.raw);
  expect(parsed.from?.value).toEqual([{ address: `no-reply@${DOMAIN}`, name: 'Mailroom' }]);
  const text = parsed.text ?? '';
  return Object.assign(parsed, { code: /Your code is (\d{6})\./.exec(text)?.[1] ?? '', token: /mre_[A-Za-z0-9_-]{43}/.exec(text)?.[0] ?? '' });
}

async function ask(person: Tenant, newEmail: string): Promise<ApiResponse> {
  return as(person.accessToken).post('/api/v1/user/me/change-email', { new_email: newEmail, current_password: person.password });
}

describe('changing the email address', () => {
  it('confirms from the new address: the change happens then, verified; other sessions end; the new address logs in', async () => {
    const person = await signUp();
    const laptop = (await anon.post('/api/v1/auth/login', { email: person.email, password: person.password })).body;
    const newEmail = fresh();

    expect(refusal(await as(person.accessToken).post('/api/v1/user/me/change-email', { new_email: newEmail, current_password: 'not it at all' }))).toEqual([403, 'forbidden', expect.any(String)]);
    expect((await as(person.key).post('/api/v1/user/me/change-email', { new_email: newEmail, current_password: person.password })).status).toBe(403);
    const asked = await ask(person, newEmail.toUpperCase());
    expect([asked.status, asked.body]).toEqual([202, {}]);

    const confirm = await mailTo(newEmail, 'email_change');
    expect(confirm.code).toMatch(/^\d{6}$/);
    expect(confirm.text).toContain(`${APP_URL}/confirm-email-change#token=${confirm.token}`);
    const notice = await mailTo(person.email, 'email_change_requested');
    expect(notice.text).toContain(newEmail);
    expect(notice.text).not.toMatch(/mre_|#token=/);
    // Nothing changed yet.
    expect((await as(person.accessToken).get('/api/v1/user/me')).body.email).toBe(person.email);

    const confirmed = await as(person.accessToken).post('/api/v1/user/me/change-email/confirm', { code: confirm.code });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ email: newEmail, email_verified: true });
    await waitFor(async () => (await as(laptop.access_token).get('/api/v1/user/me')).status === 401, { ...bound, what: 'the other session refused' });
    expect((await as(person.accessToken).get('/api/v1/user/me')).body.email).toBe(newEmail);
    expect((await anon.post('/api/v1/auth/login', { email: newEmail, password: person.password })).status).toBe(200);
    expect((await anon.post('/api/v1/auth/login', { email: person.email, password: person.password })).status).toBe(401);
    // The link of the same mail worked once, with the code.
    expect(refusal(await as(person.accessToken).post('/api/v1/user/me/change-email/confirm', { token: confirm.token }))).toEqual([400, 'invalid_code', expect.any(String)]);
  });

  it('answers 409 at confirmation when another account took the address meanwhile, and changes nothing', async () => {
    const person = await signUp();
    const newEmail = fresh();
    expect((await ask(person, newEmail)).status).toBe(202);
    const { token } = await mailTo(newEmail, 'email_change');
    expect((await anon.post('/api/v1/auth/signup', { email: newEmail, password: 'a long password here' })).status).toBe(201);

    const late = await as(person.accessToken).post('/api/v1/user/me/change-email/confirm', { token });
    expect(refusal(late)).toEqual([409, 'email_taken', expect.stringMatching(/was taken by another account/)]);
    expect((await as(person.accessToken).get('/api/v1/user/me')).body.email).toBe(person.email);
    // Taken already when asked: 409 then.
    const other = await signUp();
    expect(refusal(await ask(other, newEmail))).toEqual([409, 'email_taken', expect.any(String)]);
  });

  it('refuses bad input with 400 and says what to give', async () => {
    const person = await signUp();
    const me = as(person.accessToken);
    const cases: [string, unknown, string][] = [
      ['/api/v1/user/me/change-email', { new_email: 'not an address', current_password: person.password }, 'body.new_email'],
      ['/api/v1/user/me/change-email', { new_email: person.email, current_password: person.password }, 'body.new_email'],
      ['/api/v1/user/me/change-email', { new_email: fresh() }, 'body.current_password'],
      ['/api/v1/user/me/change-email/confirm', {}, 'body.code'],
      ['/api/v1/user/me/change-email/confirm', { code: '12345' }, 'body.code'],
      ['/api/v1/user/me/change-email/confirm', { token: `mrv_${'x'.repeat(43)}` }, 'body.token'],
      ['/api/v1/user/me/change-email/confirm', { token: `mre_${'x'.repeat(43)}`, code: '123456' }, 'body.token'],
    ];
    for (const [path, body, where] of cases) {
      const res = await me.post(path, body);
      expect([JSON.stringify(body), res.status, res.body.error.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(where);
    }
    expect(refusal(await me.post('/api/v1/user/me/change-email/confirm', { code: '123456' }))).toEqual([400, 'invalid_code', expect.any(String)]);
  });
});
