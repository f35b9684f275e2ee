/**
 * Invitations over HTTP, as people use them: an admin invites an address, the invitation
 * mail (read from the test relay: our provider here) carries the token, the invitee signs up
 * with that address and accepts, and is then a member. Every refusal: roles, an owner role,
 * an existing member, another account, revoked, used, expired and unknown tokens, another
 * organization's invitation.
 */
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { addColleague } from './colleagues';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const { anon, env, tenant, signUp } = usePlatform({
  env: () => ({ MAIL_DOMAIN: DOMAIN, SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url }),
});
afterAll(async () => {
  await relay?.close();
});

const owner = () => anon.withToken(tenant.accessToken);
const fresh = () => `invitee-${randomBytes(6).toString('hex')}@example.com`;

/** The token of the n-th invitation mail to `to`, read from the relay. */
async function tokenMailedTo(to: string, n = 1): Promise<{ token: string; text: string; from: { address?: string; name: string }[] }> {
  const mails = await waitFor(
    () => {
      const found = relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes('X-Mailroom-Template: invitation'));
      return found.length >= n && found;
    },
    { timeoutMs: 20_000, what: `invitation mail ${n} to ${to}` },
  );
  const parsed = await simpleParser(mails[n - 1]!.raw);
  const token = /mri_[A-Za-z0-9_-]{43}/.exec(parsed.text ?? '')?.[0];
  if (!token) throw new Error('no token in the invitation mail');
  expect(parsed.html).toContain(`<code>${token}</code>`);
  return { token, text: parsed.text ?? '', from: parsed.from?.value ?? [] };
}

describe('invitations', () => {
  it('invites by email; the invitee signs up, accepts with the mailed token, and is a member', async () => {
    const email = fresh();
    const invited = await owner().post('/api/v1/org/invitations', { email: email.toUpperCase(), role: 'member' });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ id: expect.stringMatching(/^inv_/), org_id: tenant.org_id, email, role: 'member', status: 'pending', decided_at: null });
    expect(JSON.stringify(invited.body)).not.toMatch(/mri_/);
    const mail = await tokenMailedTo(email);
    expect(mail.from).toEqual([{ address: `no-reply@${DOMAIN}`, name: 'Mailroom' }]);
    expect(mail.text).toMatch(/as a member/);

    const invitee = await signUp(email);
    const accepted = await anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token: mail.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ org_id: tenant.org_id, member_id: expect.stringMatching(/^mem_/), role: 'member' });
    const members = (await owner().get('/api/v1/org/members?limit=100')).body.data;
    expect(members).toContainEqual(expect.objectContaining({ id: accepted.body.member_id, email, role: 'member' }));

    // The token works once.
    const again = await anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token: mail.token });
    expect([again.status, again.body.error.code, again.body.error.message]).toEqual([409, 'conflict', expect.stringMatching(/already used/)]);
    const listed = (await owner().get('/api/v1/org/invitations')).body.data;
    expect(listed.find((i: { id: string }) => i.id === invited.body.id)).toMatchObject({ status: 'accepted', decided_at: expect.any(String) });
    // A member already: inviting them again is a conflict.
    const twice = await owner().post('/api/v1/org/invitations', { email, role: 'viewer' });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'conflict']);
  });

  it('refuses members and viewers, the owner role, bad input, and a token of another address', async () => {
    const member = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), 'member');
    const admin = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), 'admin');
    const cases: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ['a member inviting', anon.withToken(member.token).post('/api/v1/org/invitations', { email: fresh(), role: 'viewer' }), 403, 'forbidden'],
      ['an API key inviting', anon.withToken(tenant.key).post('/api/v1/org/invitations', { email: fresh(), role: 'viewer' }), 403, 'forbidden'],
      ['an admin inviting an owner', anon.withToken(admin.token).post('/api/v1/org/invitations', { email: fresh(), role: 'owner' }), 400, 'invalid_request'],
      ['not an email', owner().post('/api/v1/org/invitations', { email: 'nobody', role: 'member' }), 400, 'invalid_request'],
      ['no role', owner().post('/api/v1/org/invitations', { email: fresh() }), 400, 'invalid_request'],
      ['the owner themself', owner().post('/api/v1/org/invitations', { email: tenant.email, role: 'admin' }), 409, 'conflict'],
      ['a malformed token', owner().post('/api/v1/invitations/accept', { token: 'abc' }), 400, 'invalid_request'],
      ['an unknown token', owner().post('/api/v1/invitations/accept', { token: `mri_${'x'.repeat(43)}` }), 404, 'not_found'],
      ['an API key accepting', anon.withToken(tenant.key).post('/api/v1/invitations/accept', { token: `mri_${'x'.repeat(43)}` }), 403, 'forbidden'],
    ];
    for (const [what, res, status, code] of cases) {
      const r = await res;
      expect([what, r.status, r.body.error?.code]).toEqual([what, status, code]);
    }
    expect((await anon.withToken(member.token).get('/api/v1/org/invitations')).status).toBe(403);

    // An admin invites; someone else, signed in with another address, cannot use the token.
    const email = fresh();
    expect((await anon.withToken(admin.token).post('/api/v1/org/invitations', { email, role: 'viewer' })).status).toBe(201);
    const { token } = await tokenMailedTo(email);
    const other = await signUp();
    const wrong = await anon.withToken(other.accessToken).post('/api/v1/invitations/accept', { token });
    expect([wrong.status, wrong.body.error.code, wrong.body.error.message]).toEqual([403, 'forbidden', expect.stringMatching(/another email address/)]);
  });

  it('revokes (the token then fails), replaces a pending invitation on re-invite, and pages the list', async () => {
    const email = fresh();
    const first = await owner().post('/api/v1/org/invitations', { email, role: 'viewer' });
    const firstToken = (await tokenMailedTo(email)).token;
    // Inviting the address again replaces the pending invitation: a resend with a new token.
    const second = await owner().post('/api/v1/org/invitations', { email, role: 'admin' });
    expect(second.status).toBe(201);
    const secondToken = (await tokenMailedTo(email, 2)).token;
    expect(secondToken).not.toBe(firstToken);
    const page = await owner().get('/api/v1/org/invitations?limit=1');
    expect(page.body.data.map((i: { id: string }) => i.id)).toEqual([second.body.id]);
    const next = await owner().get(`/api/v1/org/invitations?limit=1&page_token=${page.body.next_page_token}`);
    expect(next.body.data[0]).toMatchObject({ id: first.body.id, status: 'revoked' });

    expect((await owner().delete(`/api/v1/org/invitations/${second.body.id}`)).status).toBe(204);
    const invitee = await signUp(email);
    for (const token of [firstToken, secondToken]) {
      const res = await anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token });
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([409, 'conflict', expect.stringMatching(/revoked/)]);
    }
    expect((await owner().delete(`/api/v1/org/invitations/${second.body.id}`)).status).toBe(409);
    // Another organization's invitation: 404.
    const stranger = await signUp();
    const theirs = await anon.withToken(stranger.accessToken).delete(`/api/v1/org/invitations/${first.body.id}`);
    expect([theirs.status, theirs.body.error.code]).toEqual([404, 'not_found']);
    expect((await owner().delete('/api/v1/org/invitations/inv_nope')).status).toBe(400);
  });

  it('makes one member of two accepts of the same token at once', async () => {
    const email = fresh();
    expect((await owner().post('/api/v1/org/invitations', { email, role: 'viewer' })).status).toBe(201);
    const { token } = await tokenMailedTo(email);
    const invitee = await signUp(email);
    const both = await Promise.all([1, 2].map(() => anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const members = (await owner().get('/api/v1/org/members?limit=100')).body.data.filter((m: { email: string }) => m.email === email);
    expect(members).toEqual([expect.objectContaining({ role: 'viewer' })]);
  });

  it('answers an expired invitation with 410', async () => {
    const email = fresh();
    const invited = await owner().post('/api/v1/org/invitations', { email, role: 'member' });
    const { token } = await tokenMailedTo(email);
    const db: Kysely<unknown> = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
    try {
      await sql`update orgs.invitations set expires_at = now() - interval '1 second' where id = ${invited.body.id}`.execute(db);
    } finally {
      await db.destroy();
    }
    const invitee = await signUp(email);
    const late = await anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token });
    expect([late.status, late.body.error.code]).toEqual([410, 'expired']);
    expect((await owner().get('/api/v1/org/invitations')).body.data.find((i: { id: string }) => i.id === invited.body.id).status).toBe('expired');
  });
});
