/**
 * The SSRF guard with real sockets. Receivers listen on loopback and count connections:
 * with the guard on (no WEBHOOK_ALLOWED_CIDRS), none reach them, whatever the URL says
 * (literal addresses in every form, a name resolving to loopback), and the attempt is
 * recorded as failed with error blocked_destination and http_status 0.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { callRpc, publishEvent, type Bus } from '@mailroom/messaging';
import { KEY_SCOPES, newId, type AuthContext } from '@mailroom/contracts';
import { connectTestBus, bootServices, createTestContext, messageReceivedEvent, standInPlanLimits, waitFor, WebhookReceiver, type BootedServices, type TestContext } from '@mailroom/testing';
import { IpPolicy } from '../src/domain/ip-policy';
import { RESPONSE_KEEP_LIMIT, WebhookHttpClient, type PostResult } from '../src/delivery/http-client';
import { webhooksService } from '../src/main';

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

  // Every TCP connection the client's sockets try (address:port), seen from undici's own call
  // of net.connect: a refusal must make none, wherever it would have gone (the receivers above
  // only see connections to loopback).
  let attempted: string[];
  let connectSpy: jest.SpyInstance;

  beforeEach(() => {
    attempted = [];
    const connect = net.connect;
    connectSpy = jest.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
      const socket = connect(...args);
      socket.on('connectionAttempt', (address: string, port: number) => attempted.push(`${address}:${port}`));
      return socket;
    }) as typeof net.connect);
  });

  afterEach(() => connectSpy.mockRestore());

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
    expect(attempted).toEqual([]);
  });

  it('sees the connections the guard lets through (the check of the refusals above is not blind)', async () => {
    const allowed = new WebhookHttpClient({
      ips: new IpPolicy(['127.0.0.1/32']),
      timeoutMs: 2_000,
      resolver: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      expect((await allowed.post(`http://127.0.0.1:${v4.port}/`, body, headers)).ok).toBe(true);
      expect((await allowed.post(`http://allowed.test:${v4.port}/`, body, headers)).ok).toBe(true);
      // A literal address and a name: two origins, two connections.
      expect(attempted).toEqual([`127.0.0.1:${v4.port}`, `127.0.0.1:${v4.port}`]);
    } finally {
      await allowed.close();
    }
  });

  it('checks the address it connects to in the connection itself: a name rebound after its first answer is refused', async () => {
    // `connection: close`: each post needs a new connection, and so a new lookup.
    const receiver = await WebhookReceiver.start({ reply: () => ({ status: 200, headers: { connection: 'close' } }) });
    // Where the name points after the first answer, on the receiver's port: a resolve-check-then-connect
    // guard would check the first answer and connect here with the second.
    let reboundConnections = 0;
    const rebound = createNetServer((s: Socket) => {
      reboundConnections++;
      s.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      rebound.once('error', reject);
      rebound.listen(receiver.port, '127.0.0.3', resolve);
    });
    let lookups = 0;
    const client = new WebhookHttpClient({
      ips: new IpPolicy(['127.0.0.1/32']),
      timeoutMs: 2_000,
      resolver: async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.3', family: 4 }],
    });
    try {
      const url = `http://rebind.test:${receiver.port}/hook`;
      expect(await client.post(url, body, headers)).toMatchObject({ ok: true, httpStatus: 200 });
      expect(receiver.received).toHaveLength(1);
      expect(lookups).toBe(1);
      expect(await client.post(url, body, headers)).toMatchObject({ ok: false, httpStatus: 0, error: 'blocked_destination' });
      expect(lookups).toBe(2);
      expect(reboundConnections).toBe(0);
      expect(receiver.connections).toBe(1);
      expect(attempted).toEqual([`127.0.0.1:${receiver.port}`]);
    } finally {
      await client.close();
      await receiver.close();
      await new Promise((resolve) => rebound.close(resolve));
    }
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

describe('the HTTP client, answers and their verdicts', () => {
  const client = new WebhookHttpClient({ ips: new IpPolicy(['127.0.0.1/32']), timeoutMs: 1_000 });
  let server: Server;
  let port: number;
  let handle: (req: IncomingMessage, res: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('takes the status line as the verdict when the body never ends', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    };
    const res = await client.post(`http://127.0.0.1:${port}/`, body, headers);
    expect(res).toMatchObject({ ok: true, httpStatus: 200, timedOut: false });
  });

  it('reads at most 64 KB of a body that never ends: the verdict comes without waiting for the deadline', async () => {
    // No deadline within the test's life: only the read limit can end this attempt.
    const patient = new WebhookHttpClient({ ips: new IpPolicy(['127.0.0.1/32']), timeoutMs: 3_600_000 });
    let answer: ServerResponse | undefined;
    let hungUp = false;
    handle = (_req, res) => {
      answer = res;
      res.on('close', () => (hungUp = true));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(200 * 1024));
    };
    let result: PostResult | undefined;
    void patient.post(`http://127.0.0.1:${port}/`, body, headers).then((r) => (result = r));
    try {
      const res = await waitFor(() => result, { what: 'the verdict while the body is still coming' });
      expect(res).toMatchObject({ ok: true, httpStatus: 200, timedOut: false });
      expect(res.error).toBeUndefined();
      expect(res.responseBody).toHaveLength(4096);
      // The client hung up on an answer that was never ended.
      await waitFor(() => hungUp, { what: 'the client to close the connection' });
      expect(answer!.writableEnded).toBe(false);
    } finally {
      answer?.destroy();
      await patient.close();
    }
  });

  it('fails with timeout and http_status 0 when no status line comes within the deadline', async () => {
    handle = () => {};
    const res = await client.post(`http://127.0.0.1:${port}/`, body, headers);
    expect(res).toMatchObject({ ok: false, httpStatus: 0, error: 'timeout', timedOut: true });
    expect(res.durationMs).toBeGreaterThanOrEqual(900);
  });

  it('keeps Retry-After and the start of the body of a failed answer', async () => {
    handle = (_req, res) => res.writeHead(503, { 'retry-after': '120' }).end('try later');
    const res = await client.post(`http://127.0.0.1:${port}/`, body, headers);
    expect(res).toMatchObject({ ok: false, httpStatus: 503, error: 'non_2xx_status', retryAfter: '120', responseBody: 'try later' });
  });

  it('does not follow a redirect', async () => {
    let followed = 0;
    handle = (req, res) => {
      if (req.url === '/moved') followed++;
      res.writeHead(307, { location: `http://127.0.0.1:${port}/moved` }).end();
    };
    const res = await client.post(`http://127.0.0.1:${port}/start`, body, headers);
    expect(res).toMatchObject({ ok: false, httpStatus: 307, error: 'redirect_not_followed' });
    expect(followed).toBe(0);
  });

  it('sends the path and query of the URL, the body byte for byte and the given headers', async () => {
    let seen: { url?: string; headers?: IncomingMessage['headers']; raw?: Buffer } = {};
    handle = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = { url: req.url, headers: req.headers, raw: Buffer.concat(chunks) };
        res.writeHead(204).end();
      });
    };
    const res = await client.post(`http://127.0.0.1:${port}/hooks/in?tenant=a&x=1`, body, { ...headers, 'x-service-timestamp': '1700000000' });
    expect(res).toMatchObject({ ok: true, httpStatus: 204 });
    expect(seen.url).toBe('/hooks/in?tenant=a&x=1');
    expect(seen.raw!.equals(body)).toBe(true);
    expect(seen.headers).toMatchObject({ 'content-type': 'application/json', 'x-service-timestamp': '1700000000', 'content-length': String(body.length) });
  });

  it('ends an attempt cut short by shutdown as aborted', async () => {
    let arrived = false;
    handle = () => (arrived = true);
    const stop = new AbortController();
    const pending = client.post(`http://127.0.0.1:${port}/`, body, headers, stop.signal);
    await waitFor(() => arrived, { timeoutMs: 900, what: 'the request at the receiver' });
    stop.abort();
    expect(await pending).toMatchObject({ ok: false, httpStatus: 0, error: 'aborted' });
  });

  it('classifies a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await client.post(`http://127.0.0.1:${freePort}/`, body, headers)).toMatchObject({ ok: false, httpStatus: 0, error: 'connection_refused' });
  });
});

describe('the service with the guard on', () => {
  let ctx: TestContext;
  let svc: BootedServices;
  let bus: Bus;
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), ...tenant, permissions: [...KEY_SCOPES.full] };
  const call = { auth, requestId: 'ssrf-test' };

  beforeAll(async () => {
    ctx = await createTestContext({ WEBHOOK_POLL_INTERVAL_MS: '50' });
    svc = await bootServices([webhooksService], ctx.env);
    bus = await connectTestBus(ctx.env);
    // No orgs here: the made-up tenant's plan is answered by the test (no limit).
    standInPlanLimits(bus);
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
