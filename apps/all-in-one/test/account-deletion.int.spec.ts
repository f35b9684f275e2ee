/**
 * Deleting one's account over HTTP, as a person does: the password asked again; every
 * session and the API keys the person made stop working at once; login then answers 403
 * account_deleted with a recovery token, a wrong password as for an unknown address; the
 * token brings the account back, keys and all. The owner of an organization others belong
 * to transfers it first. With the platform's clock moved past 30 days, recovery fails, and
 * the purge (the operator's command, with an explicit time) deletes the account and the
 * organization it alone belonged to: login and recovery then answer as for an unknown address,
 * and the address may sign up again. Mails are read from the test relay.
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import { purgeDeleted } from '@mailroom/auth';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { ManualClock } from '@mailroom/platform';
import { freePort, startTestRelay, waitFor, type ApiResponse, type Tenant, type TestRelay } from '@mailroom/testing';
import { addColleague } from './colleagues';
import { usePlatform } from './fixtures';

const DAY = 86_400_000;
const clock = new ManualClock(new Date());
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
// The clock is the test's; the purge runs when the test says (the periodic job is off).
const { anon, env, signUp } = usePlatform({
  clock,
  tenant: false,
  env: () => ({ MAIL_DOMAIN: 'agents.test', SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url, ACCOUNT_PURGE_INTERVAL_SECONDS: '0' }),
});
afterAll(async () => {
  await relay?.close();
});

/** Revocations reach the gateway within a second (AUTH_FACTS). */
const bound = { timeoutMs: 1_000, intervalMs: 20 };
const as = (token: string) => anon.withToken(token);
/** Status, code and message: two answers compare equal when only their request ids differ. */
const refusal = (res: ApiResponse) => [res.status, res.body?.error?.code, res.body?.error?.message];
const login = (person: Pick<Tenant, 'email' | 'password'>, password = person.password) => anon.post('/api/v1/auth/login', { email: person.email, password });
const deleteAccount = (token: string, body?: unknown) => as(token).request('DELETE', '/api/v1/user/me', body);
const detail = (res: ApiResponse, path: string): string => res.body.error.details.find((d: { path: string }) => d.path === path)?.message;

async function mailTo(to: string, template: string): Promise<ParsedMail> {
  const mail = await waitFor(() => relay.received.find((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`)), {
    timeoutMs: 20_000,
    what: `${template} mail to ${to}`,
  });
  return simpleParser(mail.raw);
}

async function onDatabase<T>(run: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
  const db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
  try {
    return await run(db);
  } finally {
    await db.destroy();
  }
}

describe('deleting an account and recovering it', () => {
  it('deletes with the password: sessions and keys stop at once; login is refused with a recovery token that brings it all back', async () => {
    const person = await signUp();
    const phone = (await login(person)).body;
    expect((await person.api.get('/api/v1/inboxes')).status).toBe(200);

    // The password asked again; a key cannot delete a person.
    expect(refusal(await deleteAccount(person.accessToken, { password: 'not it at all' }))).toEqual([403, 'forbidden', expect.stringMatching(/not the password of this account/)]);
    expect(refusal(await deleteAccount(person.accessToken))).toEqual([400, 'invalid_request', expect.stringMatching(/give password/)]);
    expect((await deleteAccount(person.key, { password: person.password })).status).toBe(403);

    const deleted = await deleteAccount(person.accessToken, { password: person.password });
    expect(deleted.status).toBe(200);
    expect(Date.parse(deleted.body.recover_before) - Date.parse(deleted.body.deleted_at)).toBe(30 * DAY);
    for (const token of [person.accessToken, phone.access_token]) {
      await waitFor(async () => (await as(token).get('/api/v1/user/me')).status === 401, { ...bound, what: 'a session of the deleted account refused' });
    }
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: phone.refresh_token })).status).toBe(401);
    await waitFor(async () => (await person.api.get('/api/v1/inboxes')).status === 401, { ...bound, what: 'its API key refused' });
    const notice = await mailTo(person.email, 'account_deleted');
    expect(notice.text).toContain(`until ${deleted.body.recover_before.slice(0, 16).replace('T', ' ')} UTC`);

    // A wrong password is answered as for an address nobody has; the address is not free.
    const unknown = refusal(await login({ email: 'nobody-here@example.com', password: 'whatever it is' }));
    expect(refusal(await login(person, 'not it at all'))).toEqual(unknown);
    expect(refusal(await anon.post('/api/v1/auth/signup', { email: person.email, password: 'another long password' }))).toEqual([409, 'email_taken', expect.any(String)]);

    const refused = await login(person);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'account_deleted']);
    expect(detail(refused, 'recover_before')).toBe(deleted.body.recover_before);
    const token = detail(refused, 'recovery_token');
    expect(token).toMatch(/^mrr_/);

    const recovered = await anon.post('/api/v1/user/me/recover', { recovery_token: token });
    expect(recovered.status).toBe(200);
    expect(recovered.body).toMatchObject({ user: { email: person.email }, organization: { id: person.org_id }, token_type: 'Bearer' });
    expect((await as(recovered.body.access_token).get('/api/v1/user/me')).status).toBe(200);
    await waitFor(async () => (await person.api.get('/api/v1/inboxes')).status === 200, { ...bound, what: 'its API key working again' });
    expect((await login(person)).status).toBe(200);
    expect((await mailTo(person.email, 'account_recovered')).text).toMatch(/was recovered on/);
    expect(refusal(await anon.post('/api/v1/user/me/recover', { recovery_token: token }))).toEqual([400, 'invalid_code', expect.any(String)]);
    expect(refusal(await anon.post('/api/v1/user/me/recover', { recovery_token: 'mrr_short' }))).toEqual([400, 'invalid_request', expect.any(String)]);
  });

  it('refuses the owner of an organization others belong to, naming it, until ownership is transferred', async () => {
    const owner = await signUp();
    const colleague = await addColleague(env.DATABASE_URL!, anon, owner, () => signUp(), 'member');
    const refused = await deleteAccount(owner.accessToken, { password: owner.password });
    expect(refusal(refused)).toEqual([409, 'conflict', expect.stringContaining(`(${owner.org_id}), which other members belong to: transfer ownership first`)]);
    expect(refused.body.error.details).toEqual([{ path: owner.org_id, message: expect.stringMatching(/you own it, and 1 other member\(s\) belong to it/) }]);
    expect((await as(owner.accessToken).get('/api/v1/user/me')).status).toBe(200);

    const members = await as(owner.accessToken).get('/api/v1/org/members');
    const memberId = members.body.data.find((m: { user_id: string }) => m.user_id === colleague.user_id).id;
    const transfer = await as(owner.accessToken).post('/api/v1/org/transfer-ownership', { member_id: memberId });
    expect(transfer.status).toBe(201);
    expect((await as(colleague.token).post(`/api/v1/org/transfer-ownership/${transfer.body.id}/accept`)).status).toBe(200);
    expect((await deleteAccount(owner.accessToken, { password: owner.password })).status).toBe(200);
    // The organization stays, with its new owner.
    expect((await as(colleague.token).get('/api/v1/org')).status).toBe(200);
  });
});

describe('past the 30 days', () => {
  it('refuses recovery, and the purge deletes the account and the organization it alone belonged to; then all is as for an unknown address', async () => {
    const person = await signUp();
    const inbox = await person.api.post('/api/v1/inboxes', {});
    expect(inbox.status).toBe(201);
    const deleted = await deleteAccount(person.accessToken, { password: person.password });
    expect(deleted.status).toBe(200);
    const deletedAt = Date.parse(deleted.body.deleted_at);

    // The last minute of the window: still recoverable, and the purge leaves it.
    clock.set(new Date(deletedAt + 30 * DAY - 60_000));
    const late = await login(person);
    expect([late.status, late.body.error.code]).toEqual([403, 'account_deleted']);
    expect(await purgeDeleted(env, clock.now())).toMatchObject({ failed: 0 });
    expect((await login(person)).status).toBe(403);

    // The window is over: the token of a minute ago no longer recovers, login knows no such account.
    clock.set(new Date(deletedAt + 30 * DAY));
    const unknown = refusal(await login({ email: 'nobody-here@example.com', password: 'whatever it is' }));
    expect(refusal(await anon.post('/api/v1/user/me/recover', { recovery_token: detail(late, 'recovery_token') }))).toEqual([410, 'expired', expect.stringMatching(/recovery window of this account ended/)]);
    expect(refusal(await login(person))).toEqual(unknown);

    // The operator's command, at an explicit time.
    const purged = await purgeDeleted(env, clock.now());
    expect(purged.failed).toBe(0);
    expect(purged.accounts).toBeGreaterThanOrEqual(1);
    expect(purged.organizations_deleted).toBeGreaterThanOrEqual(1);
    expect(refusal(await login(person))).toEqual(unknown);
    expect(refusal(await anon.post('/api/v1/user/me/recover', { recovery_token: detail(late, 'recovery_token') }))).toEqual([400, 'invalid_code', expect.any(String)]);
    await waitFor(async () => (await person.api.get('/api/v1/inboxes')).status === 401, { ...bound, what: 'its API key revoked' });
    // The organization is gone, and its inbox with it (mailbox follows the deletion of its environments).
    const orgs = await onDatabase((db) => sql<{ n: number }>`select count(*)::int as n from orgs.organizations where id = ${person.org_id}`.execute(db));
    expect(orgs.rows[0]!.n).toBe(0);
    await waitFor(
      () => onDatabase(async (db) => (await sql<{ deleted: boolean }>`select deleted_at is not null as deleted from mailbox.inboxes where id = ${inbox.body.inbox_id}`.execute(db)).rows[0]?.deleted),
      { timeoutMs: 10_000, what: 'the inbox of the deleted organization removed' },
    );
    // The address is free again.
    expect((await anon.post('/api/v1/auth/signup', { email: person.email, password: 'a new long password' })).status).toBe(201);
  });
});
