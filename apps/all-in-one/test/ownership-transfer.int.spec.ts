/**
 * Ownership transfer over HTTP: ask, see it pending, accept (roles swap at once, and the
 * tokens both people hold act with their new roles within a second), cancel, expiry, every
 * refusal, and accept racing cancel. Each test hands over an organization of its own. Both
 * parties are told by email: the mails are read from the test relay (our provider here),
 * from the system address, DKIM-signed with MAIL_DOMAIN's published key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { simpleParser } from 'mailparser';
import { createDb, sql, type Kysely } from '@mailroom/db';
import type { Role } from '@mailroom/contracts';
import { freePort, startTestRelay, waitFor, type RelayedMessage, type Tenant, type TestRelay } from '@mailroom/testing';
import { addColleague, type Colleague } from './colleagues';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const { anon, env, dns, signUp } = usePlatform({
  tenant: false,
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
  }),
  dns: [{ name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}` }],
});
afterAll(async () => {
  await relay?.close();
});

/** The mails of one template the relay received for `to`, once there are `n`. */
function mailsTo(to: string, template: string, n = 1): Promise<RelayedMessage[]> {
  return waitFor(
    () => {
      const found = relay.received.filter((m) => m.rcptTo.includes(to.toLowerCase()) && m.raw.toString('latin1').includes(`X-Mailroom-Template: ${template}`));
      return found.length >= n && found;
    },
    { timeoutMs: 20_000, what: `${n} ${template} mail(s) to ${to}` },
  );
}

const as = (c: { token: string } | { accessToken: string }) => anon.withToken('token' in c ? c.token : c.accessToken);
const bound = { timeoutMs: 1_000, intervalMs: 20 };

async function organization(...roles: Role[]): Promise<{ owner: Tenant; ownerMemberId: string; people: (Colleague & { member_id: string })[] }> {
  const owner = await signUp();
  const people = [];
  for (const role of roles) {
    const c = await addColleague(env.DATABASE_URL!, anon, owner, () => signUp(), role);
    people.push({ ...c, member_id: await memberIdOf(owner, c.user_id) });
  }
  return { owner, ownerMemberId: await memberIdOf(owner, (await as(owner).get('/api/v1/user/me')).body.id), people };
}

async function memberIdOf(owner: Tenant, userId: string): Promise<string> {
  const list = await as(owner).get('/api/v1/org/members?limit=100');
  const found = (list.body.data as { id: string; user_id: string }[]).find((m) => m.user_id === userId);
  if (!found) throw new Error(`no member for ${userId}`);
  return found.id;
}

describe('ownership transfer', () => {
  it('hands the organization over: the owner becomes admin and the member owner, tokens follow within a second', async () => {
    const { owner, ownerMemberId, people } = await organization('member');
    const [member] = people;
    const asked = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: member!.member_id });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ id: expect.stringMatching(/^otr_/), status: 'pending', from_member_id: ownerMemberId, to_member_id: member!.member_id, decided_at: null });
    expect(new Date(asked.body.expires_at).getTime() - new Date(asked.body.created_at).getTime()).toBe(7 * 86_400_000);
    // Anyone in the organization sees it; a second request waits for this one.
    expect((await as(member!).get('/api/v1/org/transfer-ownership/pending')).body).toEqual({ data: [asked.body] });
    const second = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: member!.member_id });
    expect([second.status, second.body.error.code]).toEqual([409, 'conflict']);
    // Only the member asked accepts.
    const byOwner = await as(owner).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`);
    expect([byOwner.status, byOwner.body.error.code]).toEqual([403, 'forbidden']);

    const accepted = await as(member!).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: asked.body.id, status: 'accepted', decided_at: expect.any(String) });
    const roles = (await as(owner).get('/api/v1/org/members')).body.data.map((m: { id: string; role: string }) => [m.id, m.role]);
    expect(roles).toEqual(expect.arrayContaining([[ownerMemberId, 'admin'], [member!.member_id, 'owner']]));
    expect((await as(owner).get('/api/v1/org/transfer-ownership/pending')).body).toEqual({ data: [] });

    // The tokens they already hold: the new owner may hand it back, the old owner no longer may.
    const refused = await waitFor(async () => {
      const res = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: member!.member_id });
      return res.status === 403 && res;
    }, { ...bound, what: "the former owner's request to be refused" });
    expect(refused.body.error.message).toMatch(/your role is admin/);
    const back = await waitFor(async () => {
      const res = await as(member!).post('/api/v1/org/transfer-ownership', { member_id: ownerMemberId });
      return res.status === 201 && res;
    }, { ...bound, what: "the new owner's request to be taken" });
    expect(back.body).toMatchObject({ from_member_id: member!.member_id, to_member_id: ownerMemberId });
    // The former owner is an admin now: admin powers remain.
    expect((await as(owner).patch('/api/v1/org', { name: 'Renamed by the former owner' })).status).toBe(200);

    // Both were told, at each step, by mail from the system address.
    // The member got two: this request, and the one they made to hand it back (in either order).
    const toMember = await mailsTo(member!.email, 'ownership_transfer.requested', 2);
    const parsedToMember = await Promise.all(toMember.map((m) => simpleParser(m.raw)));
    const mine = parsedToMember.findIndex((p) => p.text?.includes(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`));
    const asking = toMember[mine];
    const parsed = parsedToMember[mine]!;
    expect(parsed.from?.value).toEqual([{ address: `no-reply@${DOMAIN}`, name: 'Mailroom' }]);
    expect(parsed.subject).toMatch(/asks you to take over/);
    expect(parsed.text).toContain(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`);
    expect(parsed.html).toContain(`<code>POST /api/v1/org/transfer-ownership/${asked.body.id}/accept</code>`);
    const resolver = new Resolver();
    resolver.setServers([dns.servers]);
    const verdict = await dkimVerify(asking!.raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
    expect(verdict.results.map((r) => [r.signingDomain, r.status.result])).toEqual([[DOMAIN, 'pass']]);
    const [asked2] = await mailsTo(owner.email, 'ownership_transfer.requested');
    expect((await simpleParser(asked2!.raw)).text).toContain(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`);
    for (const to of [owner.email, member!.email]) await mailsTo(to, 'ownership_transfer.accepted');
    expect((await simpleParser((await mailsTo(owner.email, 'ownership_transfer.accepted'))[0]!.raw)).subject).toMatch(/now owns/);
  });

  it('refuses a request by an admin, to yourself, to a member of another organization, and bad ids', async () => {
    const { owner, ownerMemberId, people } = await organization('admin');
    const [admin] = people;
    const cases: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ['an admin asking', as(admin!).post('/api/v1/org/transfer-ownership', { member_id: ownerMemberId }), 403, 'forbidden'],
      ['to yourself', as(owner).post('/api/v1/org/transfer-ownership', { member_id: ownerMemberId }), 400, 'invalid_request'],
      ['no member_id', as(owner).post('/api/v1/org/transfer-ownership', {}), 400, 'invalid_request'],
      ['a malformed member_id', as(owner).post('/api/v1/org/transfer-ownership', { member_id: 'mem_nope' }), 400, 'invalid_request'],
      ['an unknown field', as(owner).post('/api/v1/org/transfer-ownership', { member_id: people[0]!.member_id, role: 'owner' }), 400, 'invalid_request'],
    ];
    for (const [what, res, status, code] of cases) expect([what, (await res).status, (await res).body.error?.code]).toEqual([what, status, code]);
    const other = await signUp();
    const theirs = await memberIdOf(other, (await as(other).get('/api/v1/user/me')).body.id);
    const stranger = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: theirs });
    expect([stranger.status, stranger.body.error.code]).toEqual([404, 'not_found']);
    // An API key never transfers ownership.
    expect((await anon.withToken(owner.key).post('/api/v1/org/transfer-ownership', { member_id: people[0]!.member_id })).status).toBe(403);

    // Another organization's request: 404 to accept and cancel.
    const asked = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: admin!.member_id });
    for (const res of [await as(other).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`), await as(other).post(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`)]) {
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    expect((await as(owner).post('/api/v1/org/transfer-ownership/otr_nope/cancel')).status).toBe(400);
  });

  it('lets the owner cancel; a cancelled request cannot be accepted or cancelled again', async () => {
    const { owner, people } = await organization('admin');
    const [admin] = people;
    const asked = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: admin!.member_id });
    expect((await as(admin!).post(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`)).status).toBe(403);
    const cancelled = await as(owner).post(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', decided_at: expect.any(String) });
    for (const res of [await as(admin!).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`), await as(owner).post(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`)]) {
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([409, 'conflict', expect.stringMatching(/already cancelled/)]);
    }
    expect((await as(owner).get('/api/v1/org/members')).body.data.find((m: { id: string }) => m.id === admin!.member_id).role).toBe('admin');
    for (const to of [owner.email, admin!.email]) await mailsTo(to, 'ownership_transfer.cancelled');
    expect((await simpleParser((await mailsTo(admin!.email, 'ownership_transfer.cancelled'))[0]!.raw)).subject).toMatch(/cancelled the transfer/);
  });

  it('answers an expired request with 410 and lets the owner ask again', async () => {
    const { owner, people } = await organization('member');
    const [member] = people;
    const asked = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: member!.member_id });
    // Seven days pass (the clock of the domain is moved in its unit tests; here the row ages).
    const db: Kysely<unknown> = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
    try {
      await sql`update orgs.ownership_transfers set created_at = created_at - interval '7 days', expires_at = expires_at - interval '7 days' where id = ${asked.body.id}`.execute(db);
    } finally {
      await db.destroy();
    }
    expect((await as(owner).get('/api/v1/org/transfer-ownership/pending')).body).toEqual({ data: [] });
    const late = await as(member!).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`);
    expect([late.status, late.body.error.code, late.body.error.message]).toEqual([410, 'expired', expect.stringMatching(/expired/)]);
    expect((await as(owner).post('/api/v1/org/transfer-ownership', { member_id: member!.member_id })).status).toBe(201);
  });

  it('takes one of two requests made at once; the other is told 409', async () => {
    const { owner, people } = await organization('admin', 'member');
    const both = await Promise.all(people.map((p) => as(owner).post('/api/v1/org/transfer-ownership', { member_id: p.member_id })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    expect((await as(owner).get('/api/v1/org/transfer-ownership/pending')).body.data).toHaveLength(1);
  });

  it('decides accept racing cancel one way: exactly one wins, the other is told 409', async () => {
    const { owner, ownerMemberId, people } = await organization('admin');
    const [admin] = people;
    for (let round = 0; round < 3; round++) {
      const asked = await as(owner).post('/api/v1/org/transfer-ownership', { member_id: admin!.member_id });
      expect(asked.status).toBe(201);
      const [accept, cancel] = await Promise.all([
        as(admin!).post(`/api/v1/org/transfer-ownership/${asked.body.id}/accept`),
        as(owner).post(`/api/v1/org/transfer-ownership/${asked.body.id}/cancel`),
      ]);
      // The loser is told 409 (the request is decided). A cancel that reaches the gateway after the
      // acceptance's role fact is refused there already (403: its sender is an admin now).
      expect([accept.status, cancel.status].filter((s) => s === 200)).toHaveLength(1);
      if (accept.status === 200) expect([409, 403]).toContain(cancel.status);
      else expect(accept.status).toBe(409);
      const roles = new Map((await as(admin!).get('/api/v1/org/members')).body.data.map((m: { id: string; role: string }) => [m.id, m.role]));
      if (accept.status === 200) {
        expect([roles.get(ownerMemberId), roles.get(admin!.member_id)]).toEqual(['admin', 'owner']);
        return;
      }
      expect([roles.get(ownerMemberId), roles.get(admin!.member_id)]).toEqual(['owner', 'admin']);
    }
  });
});
