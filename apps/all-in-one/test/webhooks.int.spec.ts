/**
 * Webhooks end to end: endpoints through the HTTP API, events published on the bus as the
 * services that emit them will, deliveries to real receivers on loopback that verify each
 * signature with their own code. Time is a ManualClock shared by the platform and the
 * receivers, so retries become due when a test moves it, never by waiting.
 */
import { publishEvent, type Bus } from '@mailroom/messaging';
import { ManualClock } from '@mailroom/platform';
import { connectTestBus, domainVerifiedEvent, messageReceivedEvent, verifySignature, waitFor, WebhookReceiver, type ReceiverOptions, type Tenant } from '@mailroom/testing';
import { newId, type EventEnvelope } from '@mailroom/contracts';
import { Webhook } from 'standardwebhooks';
import { usePlatform } from './fixtures';

let bus: Bus;
const clock = new ManualClock(new Date());
const receivers: WebhookReceiver[] = [];
/** The 30 s receiver deadline, shortened so a hanging receiver costs its test 1.5 s. */
const RECEIVER_DEADLINE_MS = 1_500;

const { anon: api, env, signUp: newTenant } = usePlatform({
  env: {
    // Receivers of these tests listen on loopback: allowed here, refused by default (webhooks-ssrf.int.spec.ts).
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32,::1/128',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_TIMEOUT_MS: String(RECEIVER_DEADLINE_MS),
    RATE_LIMIT_PER_SECOND: '0',
  },
  clock,
  tenant: false,
});

/** The current test's own (see beforeEach): endpoints a test leaves behind get no event of another. */
let tenant: Tenant;

async function receiver(opts: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start({ now: () => clock.now().getTime(), ...opts });
  receivers.push(r);
  return r;
}

async function endpoint(r: WebhookReceiver, body: Record<string, unknown> = {}, t: Tenant = tenant, path = '/hook') {
  const res = await api.post('/api/v1/webhooks/endpoints', { url: r.url(path), ...body }, { token: t.key });
  expect([res.status, res.status === 201 ? undefined : res.body]).toEqual([201, undefined]);
  r.secrets.push(res.body.secret);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}

async function publish(event: EventEnvelope): Promise<EventEnvelope> {
  await publishEvent(bus, event);
  return event;
}

async function records(id: string, t: Tenant = tenant): Promise<any[]> {
  const res = await api.get(`/api/v1/webhooks/endpoints/${id}/deliveries?limit=100`, { token: t.key });
  expect(res.status).toBe(200);
  return res.body.data;
}

function recordsAtLeast(id: string, n: number, t: Tenant = tenant): Promise<any[]> {
  return waitFor(async () => {
    const data = await records(id, t);
    return data.length >= n && data;
  }, { timeoutMs: 20_000, what: `${n} delivery records of ${id}` });
}

/** Moves time to when the newest record says the next attempt is due (and a little past it). */
function advanceTo(next: string): void {
  const ms = Date.parse(next) - clock.now().getTime() + 1_000;
  if (ms > 0) clock.advance(ms);
}

/**
 * Returns once the dispatcher has claimed, and recorded, a retry that fell due after every
 * retry due now: another tenant's receiver fails an event once and its retry comes. Claims
 * take the oldest due deliveries first, and an endpoint's first ones start at once, so an
 * endpoint with retries due now has had some of them arrive by then: if none came, none is coming.
 */
async function afterALaterRetry(): Promise<void> {
  const t = await newTenant();
  const r = await receiver({ reply: (d) => ({ status: d.n === 1 ? 500 : 200 }) });
  const e = await endpoint(r, {}, t);
  await publish(messageReceivedEvent(t, clock.now()));
  const [failed] = await recordsAtLeast(e.id, 1, t);
  expect(failed).toMatchObject({ status: 'failed', next_attempt_at: expect.any(String) });
  advanceTo(failed.next_attempt_at);
  expect((await recordsAtLeast(e.id, 2, t))[0]).toMatchObject({ status: 'delivered', attempt: 2 });
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ code, message: expect.any(String), request_id: expect.any(String) });
}

beforeAll(async () => {
  bus = await connectTestBus(env);
});

// A tenant per test: its events reach only its own endpoints, so no test counts, or fires
// by moving the clock, the deliveries of another's.
beforeEach(async () => {
  tenant = await newTenant();
});

afterAll(async () => {
  await bus?.drain();
  await Promise.all(receivers.map((r) => r.close()));
});

describe('endpoints API', () => {
  it('creates with a secret shown once, reads, lists, updates and deletes', async () => {
    const r = await receiver();
    const created = await endpoint(r, { description: 'my agent' });
    expect(created).toMatchObject({ url: r.url(), description: 'my agent', disabled: false, disabled_reason: null });
    expect(created.id).toMatch(/^whe_[0-9a-z]{26}$/);
    // 32 bytes in standard base64: the Standard Webhooks libraries decode it as it is.
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // events omitted = every event type
    expect(created.events).toEqual(['message.received', 'message.sent', 'message.delivered', 'message.bounced', 'message.complained', 'message.rejected', 'domain.verified']);

    const one = await api.get(`/api/v1/webhooks/endpoints/${created.id}`, { token: tenant.key });
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('secret');
    expect(one.text).not.toContain(created.secret);
    const list = await api.get('/api/v1/webhooks/endpoints?limit=100', { token: tenant.key });
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(created.id);
    expect(list.text).not.toContain('whsec_');

    const patched = await api.patch(`/api/v1/webhooks/endpoints/${created.id}`, { events: ['message.sent', 'message.sent'], description: null, url: r.url('/other') }, { token: tenant.key });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['message.sent'], description: null, url: r.url('/other') });
    // null: every event type again.
    expect((await api.patch(`/api/v1/webhooks/endpoints/${created.id}`, { events: null }, { token: tenant.key })).body.events).toEqual(created.events);

    expect((await api.delete(`/api/v1/webhooks/endpoints/${created.id}`, { token: tenant.key })).status).toBe(204);
    expectError(await api.get(`/api/v1/webhooks/endpoints/${created.id}`, { token: tenant.key }), 404, 'not_found');
  });

  it('works with a user access token too, in the environment it acts in', async () => {
    const email = `u${Math.random().toString(36).slice(2)}@example.com`;
    const signup = await api.post('/api/v1/auth/signup', { email, password: 'correct horse battery' });
    const key = await api.post('/api/v1/keys', { name: 'k' }, { token: signup.body.access_token });
    const r = await receiver();
    const created = await api.post('/api/v1/webhooks/endpoints', { url: r.url() }, { token: signup.body.access_token });
    expect(created.status).toBe(201);
    // The user's default environment is the key's: both see the endpoint.
    const viaKey = await api.get(`/api/v1/webhooks/endpoints/${created.body.id}`, { token: key.body.key });
    expect(viaKey.status).toBe(200);
    expect((await api.get('/api/v1/webhooks/endpoints', { token: signup.body.access_token })).body.data).toHaveLength(1);
  });

  it('pages the endpoint list', async () => {
    const t = await newTenant();
    const r = await receiver();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await endpoint(r, {}, t)).id);
    const page1 = await api.get('/api/v1/webhooks/endpoints?limit=2', { token: t.key });
    expect(page1.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const page2 = await api.get(`/api/v1/webhooks/endpoints?limit=2&page_token=${page1.body.next_page_token}`, { token: t.key });
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_page_token: null });
  });

  it('refuses unknown event types, bad URLs and non-public literal addresses', async () => {
    const post = (body: unknown) => api.post('/api/v1/webhooks/endpoints', body, { token: tenant.key });
    expectError(await post({ url: 'https://example.com/hook', events: ['message.exploded'] }), 400, 'invalid_request');
    expectError(await post({ url: 'https://example.com/hook', events: [] }), 400, 'invalid_request');
    expectError(await post({ url: 'https://example.com/hook', secret: 'whsec_mine' }), 400, 'invalid_request');
    expectError(await post({ events: ['message.sent'] }), 400, 'invalid_request');
    for (const url of [
      'not a url',
      'ftp://example.com/hook',
      'https://user:pass@example.com/hook',
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00::1]/',
      'http://0.0.0.0/',
      'http://2130706434/', // 127.0.0.2, outside the allowed 127.0.0.1/32
      'https://example.com:0/hook',
      // Under 2,048 characters as sent, 12,000 once percent-encoded as it would be stored.
      `https://example.com/${'é'.repeat(2_000)}`,
    ]) {
      const res = await post({ url });
      expectError(res, 400, 'invalid_request');
    }
    // Names are resolved and checked at connect time, not here; http is fine outside production.
    expect((await post({ url: 'http://hooks.example.com/x' })).status).toBe(201);
  });

  it('keeps tenants apart: another tenant gets 404 for every id', async () => {
    const r = await receiver();
    const mine = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    const [record] = await recordsAtLeast(mine.id, 1);
    expect(record.event_id).toBe(event.id);
    const other = await newTenant();
    const base = `/api/v1/webhooks/endpoints/${mine.id}`;
    expectError(await api.get(base, { token: other.key }), 404, 'not_found');
    expectError(await api.patch(base, { description: 'x' }, { token: other.key }), 404, 'not_found');
    expectError(await api.get(`${base}/deliveries`, { token: other.key }), 404, 'not_found');
    expectError(await api.post(`${base}/deliveries/${record.id}/redeliver`, undefined, { token: other.key }), 404, 'not_found');
    expectError(await api.post(`${base}/recover`, { since: new Date(clock.now().getTime() - 60_000).toISOString() }, { token: other.key }), 404, 'not_found');
    expectError(await api.delete(base, { token: other.key }), 404, 'not_found');
    expect((await api.get('/api/v1/webhooks/endpoints', { token: other.key })).body.data).toEqual([]);
    // An event of the other tenant never reaches my endpoint.
    const otherR = await receiver();
    await endpoint(otherR, {}, other);
    const foreign = await publish(messageReceivedEvent(other, clock.now()));
    await waitFor(() => otherR.of(foreign.id).length === 1);
    expect(r.of(foreign.id)).toEqual([]);
    expect((await api.get(base, { token: tenant.key })).status).toBe(200);
  });

  it('answers 400 to a deliveries limit of 0, -1, 1000', async () => {
    const r = await receiver();
    const e = await endpoint(r);
    for (const limit of ['0', '-1', '1000', '101', 'x']) {
      expectError(await api.get(`/api/v1/webhooks/endpoints/${e.id}/deliveries?limit=${limit}`, { token: tenant.key }), 400, 'invalid_request');
    }
    expect((await api.get(`/api/v1/webhooks/endpoints/${e.id}/deliveries?limit=1`, { token: tenant.key })).body).toEqual({ data: [], next_page_token: null });
    expect((await api.get(`/api/v1/webhooks/endpoints/${e.id}/deliveries?limit=100`, { token: tenant.key })).status).toBe(200);
    // A parameter the list does not have (another API's cursor, a filter) is refused, not ignored; so is any on a route without them.
    expectError(await api.get(`/api/v1/webhooks/endpoints/${e.id}/deliveries?limit=5&starting_after=wdl_x`, { token: tenant.key }), 400, 'invalid_request');
    expectError(await api.get(`/api/v1/webhooks/endpoints/${e.id}/deliveries?status=failed`, { token: tenant.key }), 400, 'invalid_request');
    expectError(await api.get(`/api/v1/webhooks/endpoints/${e.id}?expand=secret`, { token: tenant.key }), 400, 'invalid_request');
  });
});

describe('delivery', () => {
  it('delivers the envelope, signed, as its exact JSON: 200 delivered', async () => {
    const r = await receiver();
    const e = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    await waitFor(() => r.of(event.id).length === 1);
    const [got] = r.of(event.id);
    expect(got!.verifiedWith).toBe(e.secret);
    expect(got!.raw.toString('utf8')).toBe(JSON.stringify(event));
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.timestamp).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    expect(got!.signature).toMatch(/^[0-9a-f]{64}$/);
    // Standard Webhooks beside the spec's headers: verified by the receiver's own code and by the standardwebhooks package.
    expect(got!.standardVerifiedWith).toBe(e.secret);
    expect(got!.headers['webhook-id']).toBe(event.id);
    expect(got!.headers['webhook-timestamp']).toBe(got!.timestamp);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(got!.headers[h])]));
    expect(new Webhook(e.secret).verify(got!.raw.toString('utf8'), headers)).toEqual(event);
    const [record] = await recordsAtLeast(e.id, 1);
    expect(record).toEqual({
      id: expect.stringMatching(/^wdl_/),
      event_id: event.id,
      event_type: 'message.received',
      status: 'delivered',
      http_status: 200,
      attempt: 1,
      trigger: 'scheduled',
      duration_ms: expect.any(Number),
      created_at: expect.any(String),
    });
  });

  it('500 then 200: the same id and identical body, a new timestamp and signature', async () => {
    const r = await receiver({ reply: (d) => ({ status: d.n === 1 ? 500 : 200, body: d.n === 1 ? 'oops' : 'ok' }) });
    const e = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    const [failed] = await recordsAtLeast(e.id, 1);
    expect(failed).toMatchObject({ status: 'failed', http_status: 500, attempt: 1, error: 'non_2xx_status', response_body: 'oops' });
    const delay = Date.parse(failed.next_attempt_at) - Date.parse(failed.created_at);
    expect(delay).toBeGreaterThanOrEqual(4_000);
    expect(delay).toBeLessThanOrEqual(6_100);
    advanceTo(failed.next_attempt_at);
    const [delivered] = await recordsAtLeast(e.id, 2);
    expect(delivered).toMatchObject({ status: 'delivered', http_status: 200, attempt: 2, trigger: 'scheduled', event_id: event.id });
    const [first, second] = r.of(event.id);
    expect(second!.raw.equals(first!.raw)).toBe(true);
    expect(second!.body.id).toBe(event.id);
    expect(second!.timestamp).not.toBe(first!.timestamp);
    expect(second!.signature).not.toBe(first!.signature);
    expect(first!.verifiedWith).toBe(e.secret);
    expect(second!.verifiedWith).toBe(e.secret);
    expect(second!.headers['webhook-id']).toBe(event.id);
    expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
    expect([first!.standardVerifiedWith, second!.standardVerifiedWith]).toEqual([e.secret, e.secret]);
  });

  it('keeps a response body with a NUL byte (as U+FFFD), and goes on recording everything after it', async () => {
    const r = await receiver({ reply: (d) => (d.n === 1 ? { status: 500, body: 'bad\u0000body' } : { status: 200 }) });
    const e = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    const [failed] = await recordsAtLeast(e.id, 1);
    expect(failed).toMatchObject({ event_id: event.id, status: 'failed', http_status: 500, response_body: 'bad\ufffdbody' });
    const next = await publish(messageReceivedEvent(tenant, clock.now()));
    const [delivered] = await recordsAtLeast(e.id, 2);
    expect(delivered).toMatchObject({ event_id: next.id, status: 'delivered' });
    await api.delete(`/api/v1/webhooks/endpoints/${e.id}`, { token: tenant.key });
  });

  it('retries 400, 401 and 404 like any failure', async () => {
    const statuses = [400, 401, 404, 200];
    const r = await receiver({ reply: (d) => ({ status: statuses[d.n - 1] ?? 200 }) });
    const e = await endpoint(r);
    await publish(messageReceivedEvent(tenant, clock.now()));
    for (let n = 1; n <= 3; n++) {
      const [latest] = await recordsAtLeast(e.id, n);
      // A retry announced, or the test says so here rather than timing out waiting for it.
      expect(latest).toMatchObject({ status: 'failed', http_status: statuses[n - 1], attempt: n, next_attempt_at: expect.any(String) });
      advanceTo(latest.next_attempt_at);
    }
    const [last] = await recordsAtLeast(e.id, 4);
    expect(last).toMatchObject({ status: 'delivered', http_status: 200, attempt: 4 });
    expect(last).not.toHaveProperty('next_attempt_at');
  });

  it('a receiver that hangs past the deadline: failed, http_status 0, next attempt at least 60 s later', async () => {
    const r = await receiver({ reply: () => ({ status: 200, hang: true }) });
    const e = await endpoint(r);
    await publish(messageReceivedEvent(tenant, clock.now()));
    const [record] = await recordsAtLeast(e.id, 1);
    expect(record).toMatchObject({ status: 'failed', http_status: 0, error: 'timeout', attempt: 1 });
    // Ended by the deadline, not before it (a timer counts from the event loop's clock, which can
    // lag a millisecond or two).
    expect(record.duration_ms).toBeGreaterThanOrEqual(RECEIVER_DEADLINE_MS - 5);
    expect(Date.parse(record.next_attempt_at) - Date.parse(record.created_at)).toBeGreaterThanOrEqual(60_000);
    await api.delete(`/api/v1/webhooks/endpoints/${e.id}`, { token: tenant.key });
  });

  it('does not follow a 3xx, even to an allowed 127.0.0.1', async () => {
    const target = await receiver();
    const r = await receiver({ reply: () => ({ status: 302, headers: { location: target.url() } }) });
    const e = await endpoint(r);
    await publish(messageReceivedEvent(tenant, clock.now()));
    const [record] = await recordsAtLeast(e.id, 1);
    expect(record).toMatchObject({ status: 'failed', http_status: 302, error: 'redirect_not_followed' });
    expect(target.connections).toBe(0);
    await api.delete(`/api/v1/webhooks/endpoints/${e.id}`, { token: tenant.key });
  });

  it('honours Retry-After within [scheduled, 2x], and waits at least 60 s after a 429', async () => {
    const replies = [
      { status: 429, headers: { 'retry-after': '120' } },
      { status: 503, headers: { 'retry-after': '450' } },
      { status: 200 },
    ];
    const r = await receiver({ reply: (d) => replies[d.n - 1] ?? { status: 200 } });
    const e = await endpoint(r);
    await publish(messageReceivedEvent(tenant, clock.now()));
    const [first] = await recordsAtLeast(e.id, 1);
    expect(first).toMatchObject({ status: 'failed', http_status: 429 });
    // Scheduled 5 s (+-20%), so Retry-After 120 is capped at twice that; a 429 still waits 60 s.
    const d1 = Date.parse(first.next_attempt_at) - Date.parse(first.created_at);
    expect(d1).toBeGreaterThanOrEqual(60_000);
    expect(d1).toBeLessThan(61_000);
    advanceTo(first.next_attempt_at);
    const [second] = await recordsAtLeast(e.id, 2);
    expect(second).toMatchObject({ status: 'failed', http_status: 503, attempt: 2 });
    // Scheduled 5 min (+-20%): Retry-After 450 s lies within [scheduled, 2x] and is taken as given.
    const d2 = Date.parse(second.next_attempt_at) - Date.parse(second.created_at);
    expect(d2).toBeGreaterThanOrEqual(450_000);
    expect(d2).toBeLessThan(451_000);
    advanceTo(second.next_attempt_at);
    expect((await recordsAtLeast(e.id, 3))[0]).toMatchObject({ status: 'delivered', attempt: 3 });
  });

  it('sends only the subscribed event types', async () => {
    const only = await receiver();
    const all = await receiver();
    const e1 = await endpoint(only, { events: ['domain.verified'] });
    await endpoint(all);
    // The type it did not subscribe to first: an endpoint's deliveries are created and started
    // in event order, so once the later one is recorded, the earlier one would have been too.
    const msg = await publish(messageReceivedEvent(tenant, clock.now()));
    const dom = await publish(domainVerifiedEvent(tenant, clock.now()));
    await waitFor(async () => (await records(e1.id)).some((d) => d.event_id === dom.id), { what: 'the subscribed event recorded' });
    expect((await records(e1.id)).map((d) => [d.event_id, d.event_type, d.status])).toEqual([[dom.id, 'domain.verified', 'delivered']]);
    expect(only.received.map((d) => d.body.id)).toEqual([dom.id]);
    await waitFor(() => all.of(msg.id).length === 1 && all.of(dom.id).length === 1);
  });

  it('scoped to inboxes: only their events; events of no inbox go to endpoints without the filter alone', async () => {
    const inbox = async (t: Tenant, username: string) => {
      const res = await api.post('/api/v1/inboxes', { username }, { token: t.key });
      expect(res.status).toBe(201);
      return res.body.inbox_id as string;
    };
    const [mine, another] = [await inbox(tenant, `scoped-${Date.now()}`), await inbox(tenant, `other-${Date.now()}`)];
    const scoped = await receiver();
    const unfiltered = await receiver();
    const e = await endpoint(scoped, { inbox_ids: [mine, mine] });
    expect(e).toMatchObject({ inbox_ids: [mine] });
    await endpoint(unfiltered);
    const about = (inboxId: string) => {
      const event = messageReceivedEvent(tenant, clock.now());
      event.data.inbox_id = inboxId;
      return event;
    };
    // The events it must not get first: an endpoint's deliveries start in event order.
    const elsewhere = await publish(about(another));
    const dom = await publish(domainVerifiedEvent(tenant, clock.now()));
    const ours = await publish(about(mine));
    await waitFor(() => scoped.of(ours.id).length === 1 && unfiltered.received.length === 3, { what: 'the deliveries' });
    expect(scoped.received.map((d) => d.body.id)).toEqual([ours.id]);
    expect(unfiltered.received.map((d) => d.body.id).sort()).toEqual([elsewhere.id, dom.id, ours.id].sort());

    // Another tenant's inbox, and one that does not exist, are not found (as another tenant's id is); a malformed id is a 400.
    const other = await newTenant();
    const theirs = await inbox(other, `theirs-${Date.now()}`);
    const post = (body: unknown) => api.post('/api/v1/webhooks/endpoints', body, { token: tenant.key });
    expectError(await post({ url: scoped.url(), inbox_ids: [mine, theirs] }), 404, 'not_found');
    expectError(await post({ url: scoped.url(), inbox_ids: [newId('inbox')] }), 404, 'not_found');
    expectError(await post({ url: scoped.url(), inbox_ids: ['not-an-inbox'] }), 400, 'invalid_request');
    expectError(await post({ url: scoped.url(), inbox_ids: [] }), 400, 'invalid_request');
    const patch = (body: unknown) => api.patch(`/api/v1/webhooks/endpoints/${e.id}`, body, { token: tenant.key });
    expectError(await patch({ inbox_ids: [theirs] }), 404, 'not_found');
    expect((await patch({ inbox_ids: [another] })).body.inbox_ids).toEqual([another]);
    // null: every inbox again, and events of none.
    expect((await patch({ inbox_ids: null })).body.inbox_ids).toBeNull();
    const later = await publish(domainVerifiedEvent(tenant, clock.now()));
    await waitFor(() => scoped.of(later.id).length === 1, { what: 'domain.verified to the endpoint without a filter now' });
  });

  it('two endpoints on one URL, different secrets: each delivery verifies only with its own', async () => {
    const r = await receiver();
    const a = await endpoint(r, {}, tenant, '/shared');
    const b = await endpoint(r, {}, tenant, '/shared');
    expect(a.secret).not.toBe(b.secret);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    await waitFor(() => r.of(event.id).length === 2);
    const now = clock.now().getTime();
    const verifiers = r.of(event.id).map((d) => [a.secret, b.secret].filter((s) => verifySignature(s, d.timestamp, d.signature, d.raw, now)));
    expect(verifiers.map((v) => v.length)).toEqual([1, 1]);
    expect(new Set(verifiers.flat())).toEqual(new Set([a.secret, b.secret]));
  });

  it('redelivers one manual attempt with the same event id; 409 when disabled', async () => {
    const r = await receiver();
    const e = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    const [record] = await recordsAtLeast(e.id, 1);
    const res = await api.post(`/api/v1/webhooks/endpoints/${e.id}/deliveries/${record.id}/redeliver`, undefined, { token: tenant.key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ endpoint_id: e.id, event_id: event.id });
    const [manual] = await recordsAtLeast(e.id, 2);
    expect(manual).toMatchObject({ event_id: event.id, trigger: 'manual', attempt: 1, status: 'delivered' });
    const [first, again] = r.of(event.id);
    expect(again!.raw.equals(first!.raw)).toBe(true);
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/deliveries/wdl_${'0'.repeat(26)}/redeliver`, undefined, { token: tenant.key }), 404, 'not_found');
    expect((await api.patch(`/api/v1/webhooks/endpoints/${e.id}`, { disabled: true }, { token: tenant.key })).body).toMatchObject({ disabled: true, disabled_reason: 'disabled by a user' });
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/deliveries/${record.id}/redeliver`, undefined, { token: tenant.key }), 409, 'conflict');
  });

  it('recovers the events of a window that have no successful delivery, from the event stream', async () => {
    const t = await newTenant();
    const r = await receiver();
    const before = await publish(messageReceivedEvent(t, clock.now()));
    const e = await endpoint(r, {}, t);
    const after = await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(() => r.of(after.id).length === 1);
    clock.advance(1_000);
    const since = new Date(clock.now().getTime() - 13 * 86_400_000).toISOString();
    const recover = await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since }, { token: t.key });
    expect(recover.status).toBe(202);
    expect(recover.body).toMatchObject({ id: expect.stringMatching(/^wrc_/), endpoint_id: e.id, since, status: 'running', queued: 0 });
    // It runs in the background; its resource says when it is done and what it queued.
    const finished = async (id: string) =>
      waitFor(async () => {
        const res = await api.get(`/api/v1/webhooks/endpoints/${e.id}/recoveries/${id}`, { token: t.key });
        return res.body.status === 'finished' ? res.body : undefined;
      });
    expect(await finished(recover.body.id)).toEqual({ ...recover.body, status: 'finished', queued: 1, finished_at: expect.any(String) });
    expectError(await api.get(`/api/v1/webhooks/endpoints/${e.id}/recoveries/${recover.body.id}`, { token: tenant.key }), 404, 'not_found');
    await waitFor(() => r.of(before.id).length === 1);
    const recovered = (await recordsAtLeast(e.id, 2, t)).find((d) => d.event_id === before.id);
    expect(recovered).toMatchObject({ trigger: 'manual', status: 'delivered' });
    expect(r.of(before.id)[0]!.raw.toString()).toBe(JSON.stringify(before));
    // Everything of the window is delivered now: nothing to send again.
    const again = await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since }, { token: t.key });
    expect((await finished(again.body.id)).queued).toBe(0);
    const tooLong = new Date(clock.now().getTime() - 15 * 86_400_000).toISOString();
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since: tooLong }, { token: t.key }), 400, 'invalid_request');
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since, until: since }, { token: t.key }), 400, 'invalid_request');
    // Short enough, but further back than the event stream keeps (14 days): refused, not an empty 202.
    const old = (days: number) => new Date(clock.now().getTime() - days * 86_400_000).toISOString();
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since: old(20), until: old(10) }, { token: t.key }), 400, 'invalid_request');
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since: old(16), until: old(3) }, { token: t.key }), 400, 'invalid_request');
    // 14 days back, as a client computed it a moment ago: accepted.
    const edge = new Date(clock.now().getTime() - 14 * 86_400_000 - 30_000).toISOString();
    expect((await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since: edge }, { token: t.key })).status).toBe(202);
    expectError(await api.post(`/api/v1/webhooks/endpoints/${e.id}/recover`, { since: 'yesterday' }, { token: t.key }), 400, 'invalid_request');
  });

  it('gives up after 10 attempts, one per delay of the schedule: the last record announces none, and none comes', async () => {
    // The default schedule (this file leaves WEBHOOK_RETRY_SCHEDULE unset), in seconds, each +-20%.
    const schedule = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400];
    const r = await receiver({ reply: () => ({ status: 500 }) });
    const e = await endpoint(r);
    const event = await publish(messageReceivedEvent(tenant, clock.now()));
    for (let n = 1; n <= schedule.length; n++) {
      const [latest] = await recordsAtLeast(e.id, n);
      expect(latest).toMatchObject({ event_id: event.id, status: 'failed', http_status: 500, attempt: n, next_attempt_at: expect.any(String) });
      const delay = Date.parse(latest.next_attempt_at) - Date.parse(latest.created_at);
      expect(delay).toBeGreaterThanOrEqual(schedule[n - 1]! * 800);
      expect(delay).toBeLessThanOrEqual(schedule[n - 1]! * 1_200);
      advanceTo(latest.next_attempt_at);
    }
    const [last] = await recordsAtLeast(e.id, schedule.length + 1);
    expect(last).toMatchObject({ event_id: event.id, status: 'failed', http_status: 500, attempt: 10 });
    expect(last).not.toHaveProperty('next_attempt_at');
    // Well past when an 11th would be due (24 h + 20% at most).
    clock.advance(48 * 3_600_000);
    await afterALaterRetry();
    expect(r.of(event.id)).toHaveLength(10);
    expect(await records(e.id)).toHaveLength(10);
  });
});

describe('auto-disable', () => {
  it('disables after 50 consecutive failures, cancels pending retries, makes no new deliveries', async () => {
    const t = await newTenant();
    const failing = await receiver({ reply: () => ({ status: 500 }) });
    const control = await receiver();
    const e = await endpoint(failing, {}, t);
    await endpoint(control, {}, t);
    for (let i = 0; i < 50; i++) await publish(messageReceivedEvent(t, clock.now()));
    const disabled = await waitFor(async () => {
      const res = await api.get(`/api/v1/webhooks/endpoints/${e.id}`, { token: t.key });
      return res.body.disabled === true && res.body;
    }, { timeoutMs: 20_000, what: 'auto-disable' });
    expect(disabled.disabled_reason).toMatch(/50 consecutive failed/);
    await waitFor(async () => (await records(e.id, t)).length === 50);
    expect(failing.received).toHaveLength(50);
    // Nothing is due yet (the clock has not moved), so no claim has dropped them: the disable
    // cancelled the retries of the 49 earlier failures, and their records no longer announce them.
    expect((await records(e.id, t)).filter((d) => d.next_attempt_at !== undefined)).toEqual([]);
    // Their retries would be due now, and a new event reaches only the control endpoint.
    clock.advance(3_600_000);
    const next = await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(() => control.of(next.id).length === 1);
    await afterALaterRetry();
    expect(failing.received).toHaveLength(50);
    const failed = await records(e.id, t);
    expect(failed).toHaveLength(50);
    expect(failed.every((d) => d.status === 'failed' && d.http_status === 500)).toBe(true);

    const enabled = await api.patch(`/api/v1/webhooks/endpoints/${e.id}`, { disabled: false }, { token: t.key });
    expect(enabled.body).toMatchObject({ disabled: false, disabled_reason: null });
    failing.reply = () => ({ status: 200 });
    const after = await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(() => failing.of(after.id).length === 1);
  });

  it('49 failures, 1 success, 49 failures: stays enabled', async () => {
    const t = await newTenant();
    const r = await receiver({ reply: (d) => ({ status: d.n === 50 ? 204 : 500 }) });
    const e = await endpoint(r, {}, t);
    for (let i = 0; i < 49; i++) await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(async () => (await records(e.id, t)).length === 49, { timeoutMs: 20_000 });
    await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(async () => (await records(e.id, t)).length === 50);
    expect((await records(e.id, t))[0]).toMatchObject({ status: 'delivered', http_status: 204 });
    for (let i = 0; i < 49; i++) await publish(messageReceivedEvent(t, clock.now()));
    // 99 records fit in one page of 100; wait for all 99 and look at the endpoint.
    await waitFor(async () => (await records(e.id, t)).length === 99, { timeoutMs: 20_000 });
    expect((await api.get(`/api/v1/webhooks/endpoints/${e.id}`, { token: t.key })).body).toMatchObject({ disabled: false, disabled_reason: null });
    // Its 98 retries would fire at every later move of the clock.
    expect((await api.delete(`/api/v1/webhooks/endpoints/${e.id}`, { token: t.key })).status).toBe(204);
  });
});

/**
 * Deliveries already handed to the dispatcher (queued in memory, leased to this instance)
 * follow the endpoint's changes: a disable or a delete stops them, a new URL is where they
 * go. Only attempts already running finish (4 at most per endpoint).
 */
describe('endpoint changes reach deliveries already queued', () => {
  async function publishMany(t: Tenant, n: number): Promise<EventEnvelope[]> {
    const events = Array.from({ length: n }, () => messageReceivedEvent(t, clock.now()));
    for (let i = 0; i < events.length; i += 50) await Promise.all(events.slice(i, i + 50).map((e) => publish(e)));
    return events;
  }

  /** A slow receiver's endpoint with 100 events under way, its first deliveries in. */
  async function slowEndpointUnderWay(): Promise<{ t: Tenant; slow: WebhookReceiver; e: { id: string } }> {
    const t = await newTenant();
    const slow = await receiver({ reply: () => ({ status: 200, delayMs: 40 }) });
    const e = await endpoint(slow, {}, t);
    await publishMany(t, 100);
    await waitFor(() => slow.received.length >= 5, { what: 'first deliveries' });
    return { t, slow, e };
  }

  it('auto-disable in a burst: 50 failed attempts and those already running, no more', async () => {
    const t = await newTenant();
    const failing = await receiver({ reply: () => ({ status: 500 }) });
    const e = await endpoint(failing, {}, t);
    await publishMany(t, 300);
    await waitFor(async () => (await api.get(`/api/v1/webhooks/endpoints/${e.id}`, { token: t.key })).body.disabled === true, { timeoutMs: 20_000, what: 'auto-disable' });
    // Every attempt that went out is recorded, and nothing is running.
    await waitFor(async () => failing.answering === 0 && (await records(e.id, t)).length === failing.received.length, { timeoutMs: 20_000, what: 'attempts recorded' });
    expect(failing.received.length).toBeGreaterThanOrEqual(50);
    expect(failing.received.length).toBeLessThanOrEqual(53);
    // No retry either, once due.
    clock.advance(3_600_000);
    const control = await receiver();
    const c = await endpoint(control, {}, t);
    const marker = await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(() => control.of(marker.id).length === 1);
    await recordsAtLeast(c.id, 1, t);
    expect(failing.received.length).toBeLessThanOrEqual(53);
  });

  it('a delete stops the deliveries queued for the endpoint', async () => {
    const { t, slow, e } = await slowEndpointUnderWay();
    expect((await api.delete(`/api/v1/webhooks/endpoints/${e.id}`, { token: t.key })).status).toBe(204);
    const atDelete = slow.received.length;
    await waitFor(() => slow.answering === 0, { what: 'running attempts done' });
    expect(slow.received.length).toBeLessThanOrEqual(atDelete + 4);
    expect(slow.received.length).toBeLessThan(100);
  });

  it('a disable by PATCH stops them; re-enabled, new events flow again', async () => {
    const { t, slow, e } = await slowEndpointUnderWay();
    expect((await api.patch(`/api/v1/webhooks/endpoints/${e.id}`, { disabled: true }, { token: t.key })).body.disabled).toBe(true);
    const atDisable = slow.received.length;
    await waitFor(async () => slow.answering === 0 && (await records(e.id, t)).length === slow.received.length, { what: 'running attempts recorded' });
    expect(slow.received.length).toBeLessThanOrEqual(atDisable + 4);
    expect((await api.patch(`/api/v1/webhooks/endpoints/${e.id}`, { disabled: false }, { token: t.key })).body.disabled).toBe(false);
    slow.reply = () => ({ status: 200 });
    const after = await publish(messageReceivedEvent(t, clock.now()));
    await waitFor(() => slow.of(after.id).length === 1);
    // The cancelled ones stay cancelled (recover re-sends them).
    expect(slow.received.length).toBeLessThanOrEqual(atDisable + 5);
  });

  it('a new URL: deliveries not yet started go there', async () => {
    const t = await newTenant();
    const before = await receiver({ reply: (d) => ({ status: d.verifiedWith ? 200 : 401, delayMs: 40 }) });
    const after = await receiver();
    const e = await endpoint(before, {}, t);
    after.secrets.push(e.secret);
    const events = await publishMany(t, 100);
    await waitFor(() => before.received.length >= 5, { what: 'first deliveries' });
    const patched = await api.patch(`/api/v1/webhooks/endpoints/${e.id}`, { url: after.url() }, { token: t.key });
    expect(patched.body.url).toBe(after.url());
    const atChange = before.received.length;
    await waitFor(() => events.every((ev) => before.of(ev.id).length + after.of(ev.id).length >= 1), { timeoutMs: 20_000, what: 'every event delivered' });
    expect(before.received.length).toBeLessThanOrEqual(atChange + 4);
    expect(after.received.every((d) => d.verifiedWith === e.secret)).toBe(true);
  });
});
