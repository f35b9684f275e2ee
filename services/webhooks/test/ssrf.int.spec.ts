/**
 * The SSRF guard with real sockets. Receivers listen on loopback and count connections:
 * with the guard on (no WEBHOOK_ALLOWED_CIDRS), none reach them, whatever the URL says
 * (literal addresses in every form, a name resolving to loopback), and the attempt is
 * recorded as failed with error blocked_destination and http_status 0.
 */
import { callRpc, connectBus, publishEvent, type Bus } from '@mailroom/messaging';
import { createLogger } from '@mailroom/platform';
import { newId, type AuthContext } from '@mailroom/contracts';
import { bootServices, createTestContext, messageReceivedEvent, waitFor, WebhookReceiver, type BootedServices, type TestContext } from '@mailroom/testing';
import { IpPolicy } from '../src/domain/ip-policy';
import { RESPONSE_KEEP_LIMIT, WebhookHttpClient } from '../src/delivery/http-client';
import { webhooksService } from '../src/service';

const body = Buffer.from('{"id":"evt_x"}');
const headers = { 'content-type': 'application/json' };
let v4: WebhookReceiver;
let v6: WebhookReceiver;

beforeAll(async () => {
  v4 = await WebhookReceiver.start({ reply: () => ({ status: 200 }) });
  v6 = await WebhookReceiver.start({ reply: () => ({ status: 200 }) }, '::1');
});

afterAll(async () => {
  await v4?.close();
  await v6?.close();
});

describe('the HTTP client', () => {
  const guarded = new WebhookHttpClient({
    ips: new IpPolicy(),
    timeoutMs: 2_000,
    // A name under the test's control that resolves to loopback, as a rebinding attacker's would.
    resolver: async (hostname) => (hostname === 'rebound.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }]),
  });

  afterAll(() => guarded.close());

  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${v4.port}/`],
    ['[::1]', () => `http://[::1]:${v6.port}/`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${v4.port}/`],
    ['2130706433 (127.0.0.1 as a number)', () => `http://2130706433:${v4.port}/`],
    ['a name resolving to 127.0.0.1', () => `http://rebound.test:${v4.port}/`],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data'],
    ['[fd00::1]', () => 'http://[fd00::1]/'],
    ['100.64.0.1', () => 'http://100.64.0.1/'],
  ])('refuses %s: blocked_destination, no connection', async (_name, url) => {
    const before = v4.connections + v6.connections;
    const res = await guarded.post(url(), body, headers);
    expect(res).toMatchObject({ ok: false, httpStatus: 0, error: 'blocked_destination' });
    expect(v4.connections + v6.connections).toBe(before);
  });

  it('reaches an allowed range, reads at most 64 KB of the answer and keeps 4 KB', async () => {
    const big = await WebhookReceiver.start({ reply: () => ({ status: 200, body: 'x'.repeat(1_000_000) }) });
    const allowed = new WebhookHttpClient({ ips: new IpPolicy(['127.0.0.1/32']), timeoutMs: 2_000 });
    try {
      const res = await allowed.post(big.url(), body, headers);
      expect(res).toMatchObject({ ok: true, httpStatus: 200 });
      expect(res.responseBody).toHaveLength(RESPONSE_KEEP_LIMIT);
      expect(big.received[0]!.raw.equals(body)).toBe(true);
      expect((await allowed.post(`http://localhost:${big.port}/`, body, headers)).ok).toBe(true);
      expect((await allowed.post(`http://127.0.0.2:${big.port}/`, body, headers)).error).toBe('blocked_destination');
    } finally {
      await allowed.close();
      await big.close();
    }
  });
});

describe('the service with the guard on', () => {
  let ctx: TestContext;
  let svc: BootedServices;
  let bus: Bus;
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), ...tenant };
  const call = { auth, requestId: 'ssrf-test' };

  beforeAll(async () => {
    ctx = await createTestContext({ WEBHOOK_POLL_INTERVAL_MS: '50' });
    svc = await bootServices([webhooksService], ctx.env);
    bus = await connectBus({ servers: ctx.env.NATS_URL!, name: 'ssrf-test', namespace: ctx.env.BUS_NAMESPACE, log: createLogger({ service: 't', level: 'silent' }) });
  });

  afterAll(async () => {
    await bus?.drain();
    await svc?.stop();
    await ctx?.cleanup();
  });

  it('refuses literal non-public addresses at creation', async () => {
    for (const url of [`http://127.0.0.1:${v4.port}/`, `http://[::1]:${v6.port}/`, 'http://10.0.0.1/', 'http://169.254.169.254/', `http://[::ffff:127.0.0.1]:${v4.port}/`]) {
      await expect(callRpc(bus, 'webhooks.endpoint.create', { url }, call)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('records a delivery to a name resolving to loopback as blocked_destination, with no connection made', async () => {
    const before = v4.connections;
    const endpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: `http://localhost:${v4.port}/hook` }, call);
    await publishEvent(bus, messageReceivedEvent(tenant));
    const record = await waitFor(async () => (await callRpc(bus, 'webhooks.delivery.list', { id: endpoint.id }, call)).data[0]);
    expect(record).toMatchObject({ status: 'failed', http_status: 0, error: 'blocked_destination', attempt: 1 });
    expect(record.next_attempt_at).toBeDefined();
    expect(v4.connections).toBe(before);
  });
});
