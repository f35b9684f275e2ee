/**
 * GET /api/v1/org/usage over HTTP, as a customer reads it: a fresh organization's counts,
 * then the counts moving as it creates an environment, inboxes in two environments, a
 * webhook endpoint, invites a member who accepts, receives mail over SMTP and sends through
 * the relay (a refused send not counted); another organization's resources never counted;
 * who may read it; mail of last month (the platform's clock moved back) counted in its month
 * and not in this one; and a 503 naming the owning services that do not answer. The period's
 * mail is counted by the metrics service from the event stream, a few seconds behind the mail:
 * the tests wait for it (bounded), never sleep.
 */
import nodemailer from 'nodemailer';
import { simpleParser } from 'mailparser';
import { DEFAULT_PLAN_LIMITS, rpcSubject, type OrgUsage } from '@mailroom/contracts';
import type { Bus } from '@mailroom/messaging';
import { ManualClock } from '@mailroom/platform';
import { ApiClient, bootServices, connectTestBus, freePort, signUpTenant, startTestRelay, waitFor, type ApiResponse, type BootedServices, type TestRelay } from '@mailroom/testing';
import { SERVICES } from '../src/platform';
import { addColleague } from './colleagues';
import { usePlatform, useTestContext } from './fixtures';

const DOMAIN = 'agents.test';
const free = DEFAULT_PLAN_LIMITS.free;

/** UTC months: the period of usage holding `at`. */
const monthOf = (at: Date) => ({
  start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)).toISOString(),
  end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString(),
});

describe('usage of an organization', () => {
  // The platform's clock: the test moves it to last month and back.
  const clock = new ManualClock(new Date());
  let relay: TestRelay;
  let smtpPort: number;
  beforeAll(async () => {
    smtpPort = await freePort();
    relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
  });
  const { anon, api, env, tenant, signUp } = usePlatform({
    clock,
    // PLAN_FREE_LIMITS empty: the product's own free plan, not the test context's generous one.
    env: () => ({ MAIL_DOMAIN: DOMAIN, SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url, PLAN_FREE_LIMITS: '' }),
  });
  afterAll(async () => {
    await relay?.close();
  });

  const owner = () => anon.withToken(tenant.accessToken);
  const usageOf = async (client: ApiClient = api): Promise<OrgUsage> => {
    const res: ApiResponse<OrgUsage> = await client.get('/api/v1/org/usage');
    expect([res.status, res.text]).toEqual([200, expect.any(String)]);
    return res.body;
  };
  const counts = (u: OrgUsage) => Object.fromEntries(Object.entries(u.usage).map(([name, c]) => [name, c.used]));
  const smtp = () => nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });

  /** Mail over SMTP to `to`, once stored in each inbox (read with `readers`, one client per inbox). */
  async function receive(subject: string, to: { inbox_id: string; address: string; reader: ApiClient; env?: string }[]): Promise<void> {
    await smtp().sendMail({ from: 'ada@sender.test', to: to.map((i) => i.address), subject, text: 'Hello.' });
    for (const inbox of to) {
      await waitFor(
        async () => {
          const res = await inbox.reader.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`, inbox.env ? { headers: { 'x-env-id': inbox.env } } : {});
          return res.status === 200 && res.body.data.some((m: { subject: string }) => m.subject === subject);
        },
        { timeoutMs: 20_000, what: `"${subject}" in ${inbox.inbox_id}` },
      );
    }
  }

  /** The invitation token mailed to `to` (the relay is our provider here). */
  async function invitationTokenOf(to: string): Promise<string> {
    const mail = await waitFor(() => relay.received.find((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes('X-Mailroom-Template: invitation')), { timeoutMs: 20_000, what: `invitation mail to ${to}` });
    const token = /mri_[A-Za-z0-9_-]{43}/.exec((await simpleParser(mail.raw)).text ?? '')?.[0];
    if (!token) throw new Error('no token in the invitation mail');
    return token;
  }

  let before: OrgUsage;
  let inbox: { inbox_id: string; address: string };

  it('shows a fresh organization: its owner, its default environment, nothing else, against the free plan', async () => {
    const now = clock.now();
    expect(await usageOf()).toEqual({
      org_id: tenant.org_id,
      plan: 'free',
      period: monthOf(now),
      usage: {
        inboxes: { used: 0, limit: free.inboxes },
        domains: { used: 0, limit: free.domains },
        members: { used: 1, limit: free.members, pending_invitations: 0 },
        environments: { used: 1, limit: free.environments },
        webhook_endpoints: { used: 0, limit: free.webhook_endpoints },
        messages_sent: { used: 0, limit: null },
        messages_received: { used: 0, limit: null },
      },
      generated_at: now.toISOString(),
    });
  });

  it('counts what the organization holds in every environment, and the mail it received and sent', async () => {
    const staging = await owner().post('/api/v1/environments', { name: 'staging' });
    expect(staging.status).toBe(201);
    const inStaging = { headers: { 'x-env-id': staging.body.id } };
    inbox = (await api.post('/api/v1/inboxes', { username: 'support' })).body;
    const ops = await owner().post('/api/v1/inboxes', { username: 'ops' }, inStaging);
    expect(ops.status).toBe(201);
    expect((await api.post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/usage', events: ['domain.verified'] })).status).toBe(201);

    // Invited: counted as a member already (the plan's limit counts pending invitations), then accepted.
    const email = `invitee-${Date.now()}@example.com`;
    expect((await owner().post('/api/v1/org/invitations', { email, role: 'member' })).status).toBe(201);
    expect((await usageOf()).usage.members).toEqual({ used: 2, limit: free.members, pending_invitations: 1 });
    const invitee = await signUp(email);
    expect((await anon.withToken(invitee.accessToken).post('/api/v1/invitations/accept', { token: await invitationTokenOf(email) })).status).toBe(200);

    // One SMTP transaction to an inbox of each environment: two messages received.
    await receive('Two inboxes', [
      { ...inbox, reader: api },
      { ...ops.body, reader: owner(), env: staging.body.id },
    ]);
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: ['pat@example.com', 'quinn@example.com'], subject: 'Report', text_body: 'Attached.' });
    expect(sent.status).toBe(200);
    // Refused before it left (a suppressed recipient): not sent.
    expect((await api.post('/api/v1/suppressions', { address: 'gone@example.com' })).status).toBe(201);
    const refused = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: ['gone@example.com'], subject: 'Nope', text_body: 'x' });
    expect([refused.status, refused.body.error.code]).toEqual([422, 'blocked_recipient']);

    // Sent once the provider accepted it (the relay has it), and counted once metrics read the events.
    await waitFor(
      async () => {
        const u = (await usageOf()).usage;
        return u.messages_sent.used === 1 && u.messages_received.used === 2;
      },
      { timeoutMs: 20_000, what: 'the send accepted and both receipts counted' },
    );
    before = await usageOf();
    expect(counts(before)).toEqual({ inboxes: 2, domains: 0, members: 2, environments: 2, webhook_endpoints: 1, messages_sent: 1, messages_received: 2 });
    expect(before.usage.members.pending_invitations).toBe(0);
    expect(relay.received.filter((m) => m.rcptTo.includes('pat@example.com'))).toHaveLength(1);
  });

  it("never counts another organization's resources, nor counts ours in theirs", async () => {
    const other = await signUp();
    const theirs = (await other.api.post('/api/v1/inboxes', { username: 'theirs' })).body;
    await receive('For them', [{ ...theirs, reader: other.api }]);
    await waitFor(async () => (await usageOf(other.api)).usage.messages_received.used === 1, { timeoutMs: 20_000, what: 'their receipt counted' });
    expect(counts(await usageOf(other.api))).toEqual({ inboxes: 1, domains: 0, members: 1, environments: 1, webhook_endpoints: 0, messages_sent: 0, messages_received: 1 });
    expect(counts(await usageOf())).toEqual(counts(before));
  });

  it('is read by every role and by API keys holding org.read (read_only), whatever environment they act in', async () => {
    const viewer = await addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), 'viewer');
    const expected = { ...counts(before), members: 3 };
    expect(counts(await usageOf(anon.withToken(viewer.token)))).toEqual(expected);
    const readOnly = await owner().post('/api/v1/keys', { name: 'usage reader', scope: 'read_only' });
    expect(counts(await usageOf(anon.withToken(readOnly.body.key)))).toEqual(expected);
    // Acting in another environment changes nothing: usage is the organization's.
    const envs = (await owner().get('/api/v1/environments')).body.data as { id: string; is_default: boolean }[];
    const staging = envs.find((e) => !e.is_default)!;
    expect(counts(await usageOf(owner()))).toEqual(expected);
    const inStaging = await owner().get('/api/v1/org/usage', { headers: { 'x-env-id': staging.id } });
    expect([inStaging.status, counts(inStaging.body)]).toEqual([200, expected]);
    // A key without org.read is refused, naming the permission.
    const sendOnly = await owner().post('/api/v1/keys', { name: 'sender', scope: 'send_only' });
    const refused = await anon.get('/api/v1/org/usage', { token: sendOnly.body.key });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([403, 'forbidden', expect.stringMatching(/org\.read/)]);
  });

  it('refuses a query parameter, naming it: the route takes none (as every route without a query)', async () => {
    const res = await api.get('/api/v1/org/usage?period=2026-01');
    expect([res.status, res.body.error.code, res.body.error.details]).toEqual([400, 'invalid_request', [{ path: 'query', message: expect.stringMatching(/"period"/) }]]);
  });

  it("counts last month's mail in last month, not in this one", async () => {
    const now = clock.now();
    const lastMonth = new Date(Date.parse(monthOf(now).start) - 12 * 3_600_000);
    clock.set(lastMonth);
    try {
      await receive('Last month', [{ ...inbox, reader: api }]);
      expect((await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: ['pat@example.com'], subject: 'Old news', text_body: 'x' })).status).toBe(200);
      const then = await waitFor(
        async () => {
          const u = await usageOf();
          return u.usage.messages_sent.used === 1 && u.usage.messages_received.used === 1 && u;
        },
        { timeoutMs: 20_000, what: "last month's send accepted and its receipt counted" },
      );
      expect(then.period).toEqual(monthOf(lastMonth));
      expect([then.usage.messages_received.used, then.usage.messages_sent.used]).toEqual([1, 1]);
    } finally {
      clock.set(now);
    }
    const u = await usageOf();
    expect(u.period).toEqual(monthOf(now));
    expect(counts(u)).toEqual({ ...counts(before), members: 3 });
  });
});

describe('usage while an owning service does not answer', () => {
  const ctx = useTestContext();
  let core: BootedServices;
  let gateway: ApiClient;
  beforeAll(async () => {
    // No mailbox, metrics, webhooks nor domains: only what signs up and answers the route.
    core = await bootServices([SERVICES.orgs, SERVICES.auth, SERVICES.gateway], ctx.env);
    ctx.onStop(() => core.stop());
    gateway = new ApiClient(core.running[2]!.endpoints.http!);
  });

  it('answers 503 naming every service that did not answer and what it counts, never partial counts', async () => {
    const { key } = await signUpTenant(gateway.baseUrl);
    const down = await gateway.get('/api/v1/org/usage', { token: key });
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({
      code: 'service_unavailable',
      message:
        'usage cannot be counted now: the mailbox service (inboxes), the metrics service (messages_sent, messages_received), the webhooks service (webhook_endpoints) and the domains service (domains) did not answer; retry shortly',
      request_id: expect.any(String),
    });
    expect(down.body.error.details.map((d: { path: string }) => d.path)).toEqual(['usage.inboxes', 'usage.messages_sent', 'usage.messages_received', 'usage.webhook_endpoints', 'usage.domains']);
    expect(down.body.usage).toBeUndefined();

    // Once webhooks is back, the others are still named.
    const webhooks = await bootServices([SERVICES.webhooks], ctx.env);
    ctx.onStop(() => webhooks.stop());
    const still = await gateway.get('/api/v1/org/usage', { token: key });
    expect([still.status, still.body.error.message]).toEqual([503, expect.not.stringMatching(/webhooks/)]);
  });

  it('names a service that is too slow within the gateway\'s timeout (a 503 of that service, not a 504 of orgs)', async () => {
    const { key } = await signUpTenant(gateway.baseUrl);
    // mailbox and metrics answer nothing: requests to them wait for orgs' bound on owners (3 s).
    const silent: Bus[] = [];
    for (const service of ['mailbox', 'metrics'] as const) {
      const bus = await connectTestBus(ctx.env, service, `silent-${service}`);
      bus.nc.subscribe(bus.ns.subject(rpcSubject(`${service}.usage.count`)), { queue: bus.ns.queue(service) });
      silent.push(bus);
    }
    try {
      // A 503 naming them, not the gateway's 504 (RPC_TIMEOUT_MS) of orgs as a whole.
      const slow = await gateway.get('/api/v1/org/usage', { token: key });
      expect([slow.status, slow.body.error.code]).toEqual([503, 'service_unavailable']);
      expect(slow.body.error.message).toMatch(/the mailbox service \(inboxes\)/);
      expect(slow.body.error.message).toMatch(/the metrics service \(messages_sent, messages_received\)/);
    } finally {
      await Promise.all(silent.map((b) => b.drain()));
    }
  });
});
