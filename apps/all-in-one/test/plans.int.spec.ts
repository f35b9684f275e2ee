/**
 * Plans over HTTP, as an organization meets them: upgrade requests (asked, listed, read, and
 * every refusal), a platform operator's decision over the bus (admin context, sealed as the
 * gateway seals it), and the plan's limits where each resource is made (inboxes, environments,
 * invitations and their acceptance, webhook endpoints), each refused with 403 plan_limit in
 * the error shape once full, also when creations race. The free and pro plans are tightened
 * here so the limits are reached in a few requests.
 */
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { newId, type AuthContext } from '@mailroom/contracts';
import { callRpc, type Bus } from '@mailroom/messaging';
import { connectTestBus, freePort, startTestRelay, waitFor, type ApiResponse, type Tenant, type TestRelay } from '@mailroom/testing';
import { addColleague } from './colleagues';
import { usePlatform } from './fixtures';

let relay: TestRelay;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const { anon, env, signUp } = usePlatform({
  tenant: false,
  env: () => ({
    MAIL_DOMAIN: 'agents.test',
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    PLAN_FREE_LIMITS: 'inboxes=2,members=3,environments=2,webhook_endpoints=2',
    PLAN_PRO_LIMITS: 'inboxes=3,members=4,environments=3,webhook_endpoints=3',
  }),
});

const buses: Bus[] = [];
afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await relay?.close();
});

/** A bus as `identity`, one per identity; the tests identity seals contexts as the gateway does. */
const opened = new Map<string, Promise<Bus>>();
function busAs(identity = 'tests'): Promise<Bus> {
  let bus = opened.get(identity);
  if (!bus) {
    bus = connectTestBus(env, identity, `plans-as-${identity}`);
    opened.set(identity, bus);
    void bus.then((b) => buses.push(b));
  }
  return bus;
}

const ADMIN: AuthContext = { kind: 'admin', admin_key_id: newId('adminKey') };

/** A platform operator's decision, sent as the gateway sends an admin key's (the admin routes come later). */
async function decide(id: string, decision: 'approve' | 'decline', note?: string) {
  return callRpc(await busAs(), 'orgs.upgrade.decide', { id, decision, ...(note ? { note } : {}) }, { auth: ADMIN, requestId: newId('request') });
}

const owner = (t: Tenant) => anon.withToken(t.accessToken);
const ask = (t: Tenant, body: unknown) => owner(t).post('/api/v1/org/upgrade-request', body);

function expectRefusal(res: ApiResponse, status: number, code: string, message?: RegExp | string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toEqual(res.headers.get('x-request-id'));
  if (message) expect(res.body.error.message).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
}

/** The exact answer to the one too many. */
function expectPlanLimit(res: ApiResponse, limit: string, message: string, detail: string) {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({ error: { code: 'plan_limit', message, request_id: res.headers.get('x-request-id'), details: [{ path: limit, message: detail }] } });
}

describe('upgrade requests', () => {
  it('are asked for by the owner, then listed and read by anyone who reads the organization, API keys included', async () => {
    const t = await signUp();
    const me = await owner(t).get('/api/v1/user/me');
    const made = await ask(t, { plan: 'pro', message: '  We need more inboxes.  ' });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^upr_[0-9a-z]{26}$/),
      org_id: t.org_id,
      plan: 'pro',
      current_plan: 'free',
      message: 'We need more inboxes.',
      status: 'pending',
      requested_by: me.body.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      decided_at: null,
      decision_note: null,
    });
    for (const reader of [owner(t), t.api]) {
      expect((await reader.get('/api/v1/org/upgrade-requests')).body).toEqual({ data: [made.body], next_page_token: null });
      expect((await reader.get(`/api/v1/org/upgrade-requests/${made.body.id}`)).body).toEqual(made.body);
    }
    const viewer = await addColleague(env.DATABASE_URL!, anon, t, () => signUp(), 'viewer');
    expect((await anon.get(`/api/v1/org/upgrade-requests/${made.body.id}`, { token: viewer.token })).status).toBe(200);
    // A blank message is none.
    const other = await signUp();
    expect((await ask(other, { plan: 'enterprise', message: '   ' })).body.message).toBeNull();
  });

  it('refuses members, viewers and API keys; a second pending request; the current plan; an unknown plan; a long message', async () => {
    const t = await signUp();
    for (const role of ['member', 'viewer'] as const) {
      const colleague = await addColleague(env.DATABASE_URL!, anon, t, () => signUp(), role);
      expectRefusal(await anon.post('/api/v1/org/upgrade-request', { plan: 'pro' }, { token: colleague.token }), 403, 'forbidden', /org\.manage/);
    }
    expectRefusal(await t.api.post('/api/v1/org/upgrade-request', { plan: 'pro' }), 403, 'forbidden');
    expectRefusal(await ask(t, { plan: 'free' }), 409, 'conflict', 'the organization is on the free plan already; ask for another plan');
    const unknown = await ask(t, { plan: 'gold' });
    expectRefusal(unknown, 400, 'invalid_request');
    expect(unknown.body.error.details).toEqual([{ path: 'body.plan', message: 'unknown plan "gold"; plans are free, pro, enterprise' }]);
    expect((await ask(t, {})).body.error.details).toEqual([{ path: 'body.plan', message: 'give a plan: free, pro, enterprise' }]);
    const long = await ask(t, { plan: 'pro', message: 'x'.repeat(2001) });
    expectRefusal(long, 400, 'invalid_request');
    expect(long.body.error.details).toEqual([{ path: 'body.message', message: 'a message has at most 2000 characters' }]);
    expectRefusal(await ask(t, { plan: 'pro', seats: 5 }), 400, 'invalid_request');
    const first = await ask(t, { plan: 'pro', message: 'x'.repeat(2000) });
    expect(first.status).toBe(201);
    expectRefusal(await ask(t, { plan: 'enterprise' }), 409, 'conflict', new RegExp(`pending already \\(${first.body.id}, for the pro plan\\)`));
  });

  it('keeps one pending request when two are asked at the same moment', async () => {
    const t = await signUp();
    const answers = await Promise.all([ask(t, { plan: 'pro' }), ask(t, { plan: 'enterprise' }), ask(t, { plan: 'pro' })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    expect((await owner(t).get('/api/v1/org/upgrade-requests')).body.data).toHaveLength(1);
  });

  it("answers another organization's request with 404, and a bad id or page token with 400", async () => {
    const [t, other] = [await signUp(), await signUp()];
    const theirs = await ask(other, { plan: 'pro' });
    expectRefusal(await owner(t).get(`/api/v1/org/upgrade-requests/${theirs.body.id}`), 404, 'not_found');
    expectRefusal(await owner(t).get(`/api/v1/org/upgrade-requests/${newId('upgradeRequest')}`), 404, 'not_found');
    expectRefusal(await owner(t).get('/api/v1/org/upgrade-requests/inv_01m8a4vabhcrd4hxzk162k1ma9'), 400, 'invalid_request');
    const bad = await owner(t).get('/api/v1/org/upgrade-requests?page_token=bm90IG91cnM');
    expectRefusal(bad, 400, 'invalid_request', 'page_token is not valid');
    expectRefusal(await owner(t).get('/api/v1/org/upgrade-requests?limit=101'), 400, 'invalid_request');
    expect((await owner(t).get('/api/v1/org/upgrade-requests')).body).toEqual({ data: [], next_page_token: null });
  });

  it('pages newest first', async () => {
    const t = await signUp();
    const ids: string[] = [];
    for (const plan of ['pro', 'enterprise', 'pro'] as const) {
      const made = await ask(t, { plan });
      ids.push(made.body.id);
      await decide(made.body.id, 'decline');
    }
    const first = await owner(t).get('/api/v1/org/upgrade-requests?limit=2');
    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const second = await owner(t).get(`/api/v1/org/upgrade-requests?limit=2&page_token=${first.body.next_page_token}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0], status: 'declined' })], next_page_token: null });
  });
});

describe("a platform operator's decision", () => {
  it('approves: the organization is on the new plan at once, and its higher limit lets one more inbox in', async () => {
    const t = await signUp();
    for (const username of ['one', 'two']) expect((await t.api.post('/api/v1/inboxes', { username: `${username}-${t.org_id.slice(-6)}` })).status).toBe(201);
    expectPlanLimit(
      await t.api.post('/api/v1/inboxes', {}),
      'inboxes',
      'the free plan allows 2 inboxes; the pro plan allows 3: ask for it with POST /api/v1/org/upgrade-request',
      'limit 2 on the free plan',
    );
    const asked = await ask(t, { plan: 'pro' });
    const approved = await decide(asked.body.id, 'approve', 'welcome to pro');
    expect(approved).toEqual({ ...asked.body, status: 'approved', decided_at: expect.any(String), decision_note: 'welcome to pro' });
    expect((await owner(t).get(`/api/v1/org/upgrade-requests/${asked.body.id}`)).body).toEqual(approved);
    expect((await t.api.get('/api/v1/org')).body).toMatchObject({ id: t.org_id, plan: 'pro' });
    expect((await t.api.post('/api/v1/inboxes', {})).status).toBe(201);
    expectPlanLimit(
      await t.api.post('/api/v1/inboxes', {}),
      'inboxes',
      'the pro plan allows 3 inboxes; the enterprise plan has no limit: ask for it with POST /api/v1/org/upgrade-request',
      'limit 3 on the pro plan',
    );
    // Decided once: a second decision is a conflict and changes nothing.
    await expect(decide(asked.body.id, 'decline')).rejects.toMatchObject({ code: 'conflict', message: 'this upgrade request was already approved' });
    expect((await t.api.get('/api/v1/org')).body.plan).toBe('pro');
    // Asking for the plan the organization is on now is refused; another is a new request.
    expectRefusal(await ask(t, { plan: 'pro' }), 409, 'conflict', /on the pro plan already/);
  });

  it('declines without changing the plan', async () => {
    const t = await signUp();
    const asked = await ask(t, { plan: 'enterprise' });
    expect(await decide(asked.body.id, 'decline', 'talk to sales first')).toMatchObject({ status: 'declined', decision_note: 'talk to sales first' });
    expect((await t.api.get('/api/v1/org')).body.plan).toBe('free');
    expect((await ask(t, { plan: 'enterprise' })).status).toBe(201);
  });

  it('is taken only from an admin context sealed as the gateway seals it', async () => {
    const t = await signUp();
    const asked = await ask(t, { plan: 'pro' });
    const me = await owner(t).get('/api/v1/user/me');
    const asOwner: AuthContext = { kind: 'user', user_id: me.body.id, session_id: newId('session'), org_id: t.org_id, env_id: t.env_id, role: 'owner' };
    const tests = await busAs();
    await expect(callRpc(tests, 'orgs.upgrade.decide', { id: asked.body.id, decision: 'approve' }, { auth: asOwner, requestId: newId('request') })).rejects.toMatchObject({ code: 'forbidden' });
    // The gateway's own credential without its seal key: the admin context is not believed.
    const unsealed = await busAs('gateway');
    await expect(callRpc(unsealed, 'orgs.upgrade.decide', { id: asked.body.id, decision: 'approve' }, { auth: ADMIN, requestId: newId('request') })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(decide(newId('upgradeRequest'), 'approve')).rejects.toMatchObject({ code: 'not_found' });
    expect((await t.api.get('/api/v1/org')).body.plan).toBe('free');
    expect((await owner(t).get(`/api/v1/org/upgrade-requests/${asked.body.id}`)).body.status).toBe('pending');
  });
});

describe('plan limits where resources are made', () => {
  it('environments: the default one counts, and of racing creations only the room left gets in', async () => {
    const t = await signUp();
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((name) => owner(t).post('/api/v1/environments', { name })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 403, 403, 403]);
    expectPlanLimit(
      answers.find((a) => a.status === 403)!,
      'environments',
      'the free plan allows 2 environments; the pro plan allows 3: ask for it with POST /api/v1/org/upgrade-request',
      'limit 2 on the free plan',
    );
    expect((await owner(t).get('/api/v1/environments')).body.data).toHaveLength(2);
  });

  it('inboxes: counted over every environment of the organization', async () => {
    const t = await signUp();
    const staging = await owner(t).post('/api/v1/environments', { name: 'staging' });
    expect((await t.api.post('/api/v1/inboxes', {})).status).toBe(201);
    expect((await owner(t).post('/api/v1/inboxes', {}, { headers: { 'x-env-id': staging.body.id } })).status).toBe(201);
    const answers = await Promise.all([t.api.post('/api/v1/inboxes', {}), owner(t).post('/api/v1/inboxes', {}, { headers: { 'x-env-id': staging.body.id } })]);
    for (const res of answers) expectPlanLimit(res, 'inboxes', expect.stringMatching(/^the free plan allows 2 inboxes/), 'limit 2 on the free plan');
    // A deleted inbox frees its place.
    const [listed] = (await t.api.get('/api/v1/inboxes')).body.data;
    expect((await t.api.delete(`/api/v1/inboxes/${listed.inbox_id}`)).status).toBe(204);
    expect((await t.api.post('/api/v1/inboxes', {})).status).toBe(201);
  });

  it('webhook endpoints: counted over every environment of the organization', async () => {
    const t = await signUp();
    const staging = await owner(t).post('/api/v1/environments', { name: 'staging' });
    expect((await t.api.post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/a' })).status).toBe(201);
    expect((await owner(t).post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/b' }, { headers: { 'x-env-id': staging.body.id } })).status).toBe(201);
    expectPlanLimit(
      await t.api.post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/c' }),
      'webhook_endpoints',
      'the free plan allows 2 webhook endpoints; the pro plan allows 3: ask for it with POST /api/v1/org/upgrade-request',
      'limit 2 on the free plan',
    );
    expect((await t.api.get('/api/v1/webhooks/endpoints')).body.data).toHaveLength(1);
  });

  it('members: pending invitations hold places, and an acceptance needs one among the members', async () => {
    const t = await signUp();
    const bobEmail = `bob-${randomBytes(6).toString('hex')}@example.com`;
    expect((await owner(t).post('/api/v1/org/invitations', { email: bobEmail, role: 'member' })).status).toBe(201);
    expect((await owner(t).post('/api/v1/org/invitations', { email: `carol-${randomBytes(6).toString('hex')}@example.com`, role: 'viewer' })).status).toBe(201);
    // The owner and two pending invitations fill the free plan's 3.
    expectPlanLimit(
      await owner(t).post('/api/v1/org/invitations', { email: `dan-${randomBytes(6).toString('hex')}@example.com`, role: 'member' }),
      'members',
      'the free plan allows 3 members (pending invitations included); the pro plan allows 4: ask for it with POST /api/v1/org/upgrade-request',
      'limit 3 on the free plan',
    );
    // A resend to Bob replaces his invitation: it takes the place it frees.
    expect((await owner(t).post('/api/v1/org/invitations', { email: bobEmail, role: 'admin' })).status).toBe(201);
    // Two colleagues joined otherwise meanwhile: the members alone fill the plan, Bob's acceptance is refused.
    for (const role of ['member', 'viewer'] as const) await addColleague(env.DATABASE_URL!, anon, t, () => signUp(), role);
    const bob = await signUp(bobEmail);
    const token = await tokenMailedTo(bobEmail, 2);
    expectPlanLimit(
      await anon.post('/api/v1/invitations/accept', { token }, { token: bob.accessToken }),
      'members',
      expect.stringMatching(/^the free plan allows 3 members/),
      'limit 3 on the free plan',
    );
    // On pro there is room for him.
    await decide((await ask(t, { plan: 'pro' })).body.id, 'approve');
    expect(await anon.post('/api/v1/invitations/accept', { token }, { token: bob.accessToken })).toMatchObject({ status: 200, body: { org_id: t.org_id, role: 'admin' } });
  });
});

/** The token of the n-th invitation mail to `to`, read from the relay (our provider here). */
async function tokenMailedTo(to: string, n: number): Promise<string> {
  const mails = await waitFor(
    () => {
      const found = relay.received.filter((m) => m.rcptTo.includes(to) && m.raw.toString('latin1').includes('X-Mailroom-Template: invitation'));
      return found.length >= n && found;
    },
    { timeoutMs: 20_000, what: `invitation mail ${n} to ${to}` },
  );
  const token = /mri_[A-Za-z0-9_-]{43}/.exec((await simpleParser(mails[n - 1]!.raw)).text ?? '')?.[0];
  if (!token) throw new Error('no token in the invitation mail');
  return token;
}
