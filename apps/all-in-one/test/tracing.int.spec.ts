/**
 * One inbound mail is one trace (issue 33, items 1 and 2), seen as an SRE sees it, in both
 * ways Mailroom runs: the services on the mail's path (mail-ingest, mailbox, webhooks) as
 * their own processes, started as their deployments start them (`node --require
 * telemetry-preload services/<name>/dist/main.js`; the others run in the test's process,
 * untraced), and the whole platform as one all-in-one process, where each module's spans
 * must still carry its own service.name. Both export OTLP/HTTP (JSON) to a receiver in this
 * test. A mail sent over SMTP to an inbox with a webhook endpoint must give one trace:
 * the edge's message span -> mail.inbound publish -> mailbox's handling -> the
 * message.received publish -> webhooks' handling -> the delivery attempt -> its HTTP POST,
 * which carries the trace's traceparent to the receiver. A reply to it through the API must
 * give one trace too: the gateway's request -> mailbox's handling -> the mail.outbound publish
 * (through the outbox) -> mail-send's handling -> the hand-over to the relay (`smtp send`, a
 * client span that ends with the relay's 250); the relay's delivery report, which arrives as
 * mail of its own (its own trace), is processed in a span linked to that hand-over. No
 * attribute of any span holds a key, a secret, a password, the message's text or a
 * recipient's address.
 *
 * The trace survives restarts (the context kept with the outbox row and the webhook event,
 * issue 33): a mail's message.received written by one mailbox instance and relayed by the
 * next (the first stopped while the stream refused it) is published in the mail's trace, and
 * a delivery that failed once and is retried by a new webhooks instance (the first stopped)
 * has its retry in the mail's trace too, beside the first attempt.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { createDb, sql } from '@mailroom/db';
import { connectTestBus, freePort, signUpTenant, startDnsServer, startTestRelay, waitFor, WebhookReceiver, type ApiClient, type Tenant, type TestRelay } from '@mailroom/testing';
import { startPlatform, type Platform } from '../src/platform';
import { useTestContext } from './fixtures';

const ROOT = join(__dirname, '..', '..', '..');
const PRELOAD = join(ROOT, 'libs', 'platform', 'dist', 'telemetry-preload.js');
const DOMAIN = 'agents.test';
const TRACED = ['mailbox', 'webhooks', 'mail-ingest', 'mail-send', 'gateway'];

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface Attribute {
  key: string;
  value: OtlpValue;
}
interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attribute[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}

/** An OTLP/HTTP receiver (the JSON encoding): every span exported to it, with its resource's service.name. */
class OtlpReceiver {
  readonly spans: Span[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') receiver.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(body: { resourceSpans?: { resource?: { attributes?: Attribute[] }; scopeSpans?: { spans?: Omit<Span, 'service'>[] }[] }[] }): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
      for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) this.spans.push({ ...span, service });
    }
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** A mail's spans from the SMTP edge to a delivery attempt, as "service: name", in order. */
const MAIL_TO_ATTEMPT = [
  'mail-ingest: smtp message',
  'mail-ingest: publish mail.inbound',
  'mailbox: process mail.inbound',
  'mailbox: publish events.message.received',
  'webhooks: process events.message.received',
  'webhooks: webhook delivery attempt',
];

/** The spans from `leaf` up to its trace's root (as far as `byId` has them), root first, and each as "service: name". */
function chainTo(byId: Map<string, Span>, leaf: Span | undefined): { chain: Span[]; named: string[] } {
  const chain: Span[] = [];
  for (let x = leaf; x; x = x.parentSpanId ? byId.get(x.parentSpanId) : undefined) chain.unshift(x);
  return { chain, named: chain.map((x) => `${x.service}: ${x.name}`) };
}

const attr = (span: Span, key: string): unknown => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v && (v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue);
};


const CONTEXT = {
  MAIL_DOMAIN: DOMAIN,
  SMTP_HOSTNAME: 'mx.agents.test',
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32,::1/128',
  WEBHOOK_POLL_INTERVAL_MS: '50',
};

/** What a mode started: the gateway's URL, the SMTP port, the OTLP receiver, the relay mail-send hands replies to. */
interface Started {
  gateway: string;
  smtpPort: number;
  otlp: OtlpReceiver;
  relay: TestRelay;
  env: Record<string, string>;
}

/** Starts a traced process (the preload first, as every start command does) and waits until it is ready (its /readyz). */
async function startTraced(what: string, entry: string[], env: Record<string, string>, otlp: OtlpReceiver, children: ChildProcess[]): Promise<ChildProcess> {
  const healthPort = await freePort();
  const child = spawn(process.execPath, ['--require', PRELOAD, join(ROOT, ...entry)], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env, HEALTH_PORT: String(healthPort), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100', NODE_OPTIONS: '' },
  });
  children.push(child);
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 60_000, what: `${what} to be ready` },
  );
  return child;
}

/** Stops a traced process as its deployment would (SIGTERM: it finishes, exports its spans, exits). */
async function stopTraced(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise((r) => (child.once('exit', r), child.kill('SIGTERM')));
}

/**
 * A test context, an OTLP receiver, a DNS server for the sender's SPF, the traced processes
 * `start` starts, and a tenant (its address verified) on the gateway it names.
 */
function useTraced(start: (env: Record<string, string>, otlp: OtlpReceiver, children: ChildProcess[], onStop: (stop: () => Promise<unknown>) => void) => Promise<string>) {
  const context = useTestContext(CONTEXT);
  let started: (Started & { tenant: Tenant }) | undefined;
  beforeAll(async () => {
    const otlp = await OtlpReceiver.start();
    const children: ChildProcess[] = [];
    context.onStop(async () => {
      await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => (c.once('exit', r), c.kill('SIGTERM'))))));
      await otlp.close();
    });
    const dns = await startDnsServer([
      { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
      { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
    ]);
    context.onStop(() => dns.close());
    const smtpPort = await freePort();
    // The provider's relay: accepts what mail-send hands over and reports each delivery back to the edge.
    const relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
    context.onStop(() => relay.close());
    const env: Record<string, string> = { ...context.env, DNS_SERVERS: dns.servers, SMTP_PORT: String(smtpPort), SMTP_RELAY_URL: relay.url };
    const gateway = await start(env, otlp, children, context.onStop);
    const tenant = await signUpTenant(gateway);
    const db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
    await sql`update auth.users set email_verified_at = now() where email = ${tenant.email.toLowerCase()}`.execute(db);
    await db.destroy();
    started = { gateway, smtpPort, otlp, relay, env, tenant };
  }, 120_000);
  return () => started ?? (() => { throw new Error('started in beforeAll'); })();
}

/** Sends one mail to an inbox with a webhook endpoint and checks its trace, service by service; returns the trace's spans. */
async function traceOneMail(s: Started & { tenant: Tenant }): Promise<Map<string, Span>> {
  const { tenant, otlp } = s;
  const hooks = await WebhookReceiver.start();
  try {
    const api: ApiClient = tenant.api;
    const inbox = await api.post('/api/v1/inboxes', { username: 'traced', display_name: 'Traced' });
    expect(inbox.status).toBe(201);
    const endpoint = await api.post('/api/v1/webhooks/endpoints', { url: hooks.url('/hook') });
    expect(endpoint.status).toBe(201);
    hooks.secrets.push(endpoint.body.secret);

    const marker = `body-marker-${Date.now()}`;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await transport.sendMail({ from: 'ada@sender.test', to: inbox.body.address, subject: `subject ${marker}`, text: `text ${marker}` });
    transport.close();

    const delivered = await waitFor(() => hooks.received.find((d) => d.body?.type === 'message.received'), { timeoutMs: 30_000, what: 'the message.received delivery' });
    const traceparent = String(delivered.headers.traceparent ?? '');
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, postSpanId] = traceparent.split('-');

    // Every span of the trace, down to the POST the receiver answered (exported within a few batches).
    const byId = await waitFor(
      () => {
        const spans = new Map(otlp.spans.filter((x) => x.traceId === traceId).map((x) => [x.spanId, x]));
        return spans.has(postSpanId!) && [...spans.values()].some((x) => x.name === 'smtp message') && spans;
      },
      { timeoutMs: 20_000, what: `the spans of trace ${traceId}` },
    );
    const { chain, named } = chainTo(byId, byId.get(postSpanId!));
    // The root is the edge's message, and nothing of the chain is missing; each span under its service's name.
    expect(chain[0]!.parentSpanId || undefined).toBeUndefined();
    const expected = [...MAIL_TO_ATTEMPT, 'webhooks: POST'];
    expect(named.filter((n) => expected.includes(n))).toEqual(expected);
    expect(named[0]).toBe(expected[0]);
    expect(named.at(-1)).toBe('webhooks: POST');
    // eslint-disable-next-line no-console -- TRACE_TEST_PRINT=1: the chain, to look at
    if (process.env.TRACE_TEST_PRINT) console.log(named.join('\n'), `\n${byId.size} spans in the trace, ${otlp.spans.length} in all`);

    const publish = chain.find((x) => x.name === 'publish mail.inbound')!;
    expect([attr(publish, 'messaging.system'), attr(publish, 'messaging.destination.name'), attr(publish, 'messaging.operation.type')]).toEqual(['nats', 'mail.inbound', 'send']);
    const consumed = chain.find((x) => x.name === 'process events.message.received')!;
    expect([attr(consumed, 'messaging.consumer.group.name'), attr(consumed, 'messaging.message.id'), Number(attr(consumed, 'messaging.nats.message.delivery_count'))]).toEqual([
      'webhooks--dispatch',
      delivered.body.id,
      1,
    ]);
    // The recipients' lookup at RCPT is in the mail's trace too, answered by mailbox.
    expect([...byId.values()].filter((x) => x.name === 'rpc mailbox.inbox.resolve').map((x) => x.service).sort()).toEqual(['mail-ingest', 'mailbox']);

    // Nothing secret or of the message in any attribute of any span exported (all traces).
    const secrets = [tenant.key, endpoint.body.secret, tenant.password, marker, new URL(s.env.DATABASE_URL!).password].filter((x) => x && x.length >= 6);
    const values = otlp.spans.flatMap((x) => x.attributes.map((a) => `${x.name} ${a.key}=${JSON.stringify(a.value)}`));
    expect(values.length).toBeGreaterThan(0);
    expect(values.filter((v) => secrets.some((secret) => v.includes(secret)))).toEqual([]);
    expect(values.filter((v) => /\b[\w.]*(password|secret|token|authorization|api_key)[\w.]*=/i.test(v))).toEqual([]);
    return byId;
  } finally {
    await hooks.close();
  }
}

/**
 * Replies through the API to the mail traceOneMail received (its inbox `traced`) and checks the
 * reply's trace: from the gateway's request to the hand-over to the relay, each span under its
 * service's name; then the relay's delivery report (a DSN mailed back to the edge, a trace of
 * its own) processed by mail-send in a span linked to the hand-over.
 */
async function traceOneReply(s: Started & { tenant: Tenant }): Promise<void> {
  const { tenant, otlp, relay } = s;
  const api: ApiClient = tenant.api;
  const inbox = ((await api.get('/api/v1/inboxes')).body.data as { inbox_id: string; address: string }[]).find((i) => i.address.startsWith('traced@'));
  expect(inbox).toBeDefined();
  const original = await waitFor(async () => ((await api.get(`/api/v1/inboxes/${inbox!.inbox_id}/messages`)).body.data as { message_id: string }[])[0], {
    timeoutMs: 10_000,
    what: 'the traced mail in its inbox',
  });
  const reply = await api.post(`/api/v1/inboxes/${inbox!.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'reply-body-marker: done.' });
  expect(reply.status).toBe(200);
  const messageId = reply.body.message_id as string;

  // The relay took it (its 250), and reports its delivery to the edge.
  await waitFor(() => relay.received.find((m) => m.dsn.envid === messageId), { timeoutMs: 30_000, what: 'the reply at the relay' });
  const handOver = await waitFor(() => otlp.spans.find((x) => x.name === 'smtp send' && attr(x, 'mailroom.message.id') === messageId), { timeoutMs: 20_000, what: 'the hand-over span' });
  // The rest of its trace is exported by then or in the next batches: up to the gateway's request.
  const chainOf = () => {
    const byId = new Map(otlp.spans.filter((x) => x.traceId === handOver.traceId).map((x) => [x.spanId, x]));
    return { byId, ...chainTo(byId, handOver) };
  };
  const { byId, named } = await waitFor(
    () => {
      const found = chainOf();
      return !found.chain[0]!.parentSpanId && found.chain[0]!.service === 'gateway' && found;
    },
    { timeoutMs: 20_000, what: `the spans of trace ${handOver.traceId} up to the gateway's request` },
  );
  // eslint-disable-next-line no-console -- TRACE_TEST_PRINT=1: the chain, to look at
  if (process.env.TRACE_TEST_PRINT) console.log(named.join('\n'), `\n${byId.size} spans in the trace`);
  const expected = [
    'gateway: POST /api/v1/inboxes/:inbox_id/messages/:message_id/reply',
    'gateway: rpc mailbox.message.reply',
    'mailbox: rpc mailbox.message.reply',
    'mailbox: publish mail.outbound',
    'mail-send: process mail.outbound',
    'mail-send: smtp send',
  ];
  expect(named.filter((n) => expected.includes(n))).toEqual(expected);
  expect(named[0]).toBe(expected[0]);
  // A client span to the relay, ended by its answer, with where it went and nothing of the mail.
  expect(handOver.kind).toBe(3); // CLIENT
  expect(handOver.status?.code ?? 0).not.toBe(2); // not ERROR
  expect([attr(handOver, 'server.address'), Number(attr(handOver, 'server.port')), Number(attr(handOver, 'mailroom.send.recipient_count'))]).toEqual(['127.0.0.1', relay.port, 1]);

  // The delivery report: processed in the trace of the mail that carried it, linked to the hand-over.
  const processed = await waitFor(
    () => otlp.spans.find((x) => x.name === 'process mail.feedback' && x.links?.some((l) => l.traceId === handOver.traceId && l.spanId === handOver.spanId)),
    { timeoutMs: 30_000, what: 'the delivery report processed in a span linked to the hand-over' },
  );
  expect(processed.service).toBe('mail-send');
  expect(processed.traceId).not.toBe(handOver.traceId);

  // Neither the recipient's address nor the body in any attribute of the reply's trace or the report's.
  const spans = otlp.spans.filter((x) => x.traceId === handOver.traceId || x.traceId === processed.traceId);
  const values = spans.flatMap((x) => x.attributes.map((a) => `${x.service} ${x.name} ${a.key}=${JSON.stringify(a.value)}`));
  expect(values.filter((v) => /ada@sender\.test|reply-body-marker/i.test(v))).toEqual([]);
}

/**
 * One mail through two restarts: mailbox stores it and writes its message.received while the
 * event stream refuses every message (its relay fails, the row stays), is stopped, and the
 * next mailbox instance relays the row once the stream takes messages again; webhooks'
 * first attempt fails (500), its instance is stopped before the retry is due, and the next
 * instance makes the retry. Both attempts, and the publish the new mailbox made, must be in
 * the mail's trace: the publish the child of the span that wrote the row, each attempt the
 * child of the event's handling.
 */
async function traceAcrossRestarts(s: Started & { tenant: Tenant }, restart: (name: string, meanwhile?: () => Promise<void>) => Promise<void>): Promise<void> {
  const { otlp } = s;
  // A tenant of its own: its endpoint is the only one the event goes to.
  const tenant = await signUpTenant(s.gateway);
  const db = createDb<unknown>({ url: s.env.DATABASE_URL!, schema: 'public', max: 1 });
  const bus = await connectTestBus(s.env, 'migrate');
  const hooks = await WebhookReceiver.start({ reply: (d) => ({ status: d.n === 1 ? 500 : 200 }) });
  const events = bus.ns.stream('EVENTS');
  const { config } = await bus.jsm.streams.info(events);
  let refusing = false;
  try {
    const inbox = await tenant.api.post('/api/v1/inboxes', { username: 'restarted', display_name: 'Restarted' });
    expect(inbox.status).toBe(201);
    const endpoint = await tenant.api.post('/api/v1/webhooks/endpoints', { url: hooks.url('/hook'), events: ['message.received'] });
    expect(endpoint.status).toBe(201);

    // The event stream refuses every message (each is larger than it takes) until the first mailbox has stopped.
    await bus.jsm.streams.update(events, { ...config, max_msg_size: 1 });
    refusing = true;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await transport.sendMail({ from: 'ada@sender.test', to: inbox.body.address, subject: 'restarts', text: 'one mail, two restarts' });
    transport.close();
    const row = await waitFor(
      async () => (await sql<{ traceparent: string | null }>`select traceparent from mailbox.outbox where subject is null and payload like ${`%${inbox.body.inbox_id}%`}`.execute(db)).rows[0],
      { timeoutMs: 30_000, what: "the mail's message.received in mailbox's outbox" },
    );
    expect(row.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, writtenTrace, writtenSpan] = row.traceparent!.split('-');
    await restart('mailbox', async () => {
      await bus.jsm.streams.update(events, config);
      refusing = false;
    });

    // The first attempt fails; once it is recorded (a retry due in about 10 s), webhooks stops and a new instance starts.
    const first = await waitFor(() => hooks.received[0], { timeoutMs: 30_000, what: 'the first delivery' });
    const eventId = (first.body as { id: string }).id;
    await waitFor(
      async () => (await sql<{ attempts: number }>`select attempts from webhooks.jobs where event_id = ${eventId} and state = 'pending'`.execute(db)).rows[0]?.attempts === 1,
      { timeoutMs: 20_000, what: 'the failed first attempt recorded' },
    );
    await restart('webhooks', async () => {
      // Stopped before its retry was due: the retry is the new instance's.
      expect(hooks.received).toHaveLength(1);
    });
    const retry = await waitFor(() => hooks.received[1], { timeoutMs: 60_000, what: 'the retry by the new webhooks instance' });
    expect((retry.body as { id: string }).id).toBe(eventId);

    // Both POSTs in the mail's trace, the one the row was written in.
    const [firstTrace, retryTrace] = [first, retry].map((d) => String(d.headers.traceparent ?? '').split('-')[1]);
    expect([firstTrace, retryTrace]).toEqual([writtenTrace, writtenTrace]);
    const spans = await waitFor(
      () => {
        const byId = new Map(otlp.spans.filter((x) => x.traceId === writtenTrace).map((x) => [x.spanId, x]));
        const attempts = [...byId.values()].filter((x) => x.name === 'webhook delivery attempt' && attr(x, 'mailroom.event.id') === eventId);
        return attempts.length === 2 && [...byId.values()].some((x) => x.name === 'smtp message') && { byId, attempts };
      },
      { timeoutMs: 20_000, what: `the spans of trace ${writtenTrace}` },
    );
    const { byId } = spans;
    const [a1, a2] = [...spans.attempts].sort((x, y) => Number(attr(x, 'mailroom.webhook.attempt')) - Number(attr(y, 'mailroom.webhook.attempt')));
    expect([Number(attr(a1!, 'mailroom.webhook.attempt')), Number(attr(a2!, 'mailroom.webhook.attempt'))]).toEqual([1, 2]);
    // Each attempt the child of the event's handling (the retry's parent kept with the event, not in memory).
    const handling = byId.get(a1!.parentSpanId!);
    expect(handling && `${handling.service}: ${handling.name}`).toBe('webhooks: process events.message.received');
    expect(a2!.parentSpanId).toBe(a1!.parentSpanId);
    // The publish the new mailbox made is the child of the span that wrote the row, in the first mailbox.
    const { chain, named } = chainTo(byId, a2);
    expect(named.filter((n) => MAIL_TO_ATTEMPT.includes(n))).toEqual(MAIL_TO_ATTEMPT);
    expect(named[0]).toBe(MAIL_TO_ATTEMPT[0]);
    const publish = chain.find((x) => x.name === 'publish events.message.received')!;
    expect(publish.parentSpanId).toBe(writtenSpan);
  } finally {
    if (refusing) await bus.jsm.streams.update(events, config);
    await hooks.close();
    await bus.nc.close();
    await db.destroy();
  }
}

describe('services as separate processes', () => {
  /** Stops the service's process, runs `meanwhile`, and starts a new one in its place. */
  let restart: (name: string, meanwhile?: () => Promise<void>) => Promise<void> = () => Promise.reject(new Error('started in beforeAll'));
  const started = useTraced(async (env, otlp, children, onStop) => {
    const platform: Platform = await startPlatform({ env, migrate: true, services: ['orgs', 'auth', 'domains'] });
    onStop(() => platform.stop());
    const httpPort = await freePort();
    // A failed delivery is retried 10 s later (+-jitter): time enough to stop its instance first.
    const envOf = (name: string) => ({ ...env, HTTP_PORT: String(httpPort), ...(name === 'webhooks' ? { WEBHOOK_RETRY_SCHEDULE: '10' } : {}) });
    const running = new Map<string, ChildProcess>();
    for (const name of TRACED) running.set(name, await startTraced(name, ['services', name, 'dist', 'main.js'], envOf(name), otlp, children));
    restart = async (name, meanwhile) => {
      await stopTraced(running.get(name)!);
      await meanwhile?.();
      running.set(name, await startTraced(name, ['services', name, 'dist', 'main.js'], envOf(name), otlp, children));
    };
    return `http://127.0.0.1:${httpPort}`;
  });

  it('follow one inbound mail from the SMTP edge to the webhook receiver in one trace, and no attribute holds a secret', async () => {
    await traceOneMail(started());
  });

  it('follow a reply from the API call to the relay accepting it in one trace, and link its delivery report to it', async () => {
    await traceOneReply(started());
  });

  it("keep a mail in one trace across restarts: its event relayed by the next mailbox instance, its retry made by the next webhooks instance", async () => {
    await traceAcrossRestarts(started(), restart);
  }, 180_000);
});

describe('the all-in-one process', () => {
  const started = useTraced(async (env, otlp, children) => {
    const httpPort = await freePort();
    await startTraced('the all-in-one', ['apps', 'all-in-one', 'dist', 'main.js'], { ...env, HTTP_PORT: String(httpPort), MIGRATE_ON_START: 'false' }, otlp, children);
    return `http://127.0.0.1:${httpPort}`;
  });

  it('gives one inbound mail one trace too, each module under its own service.name', async () => {
    const s = started();
    await traceOneMail(s);
    // The API calls of the test: the gateway's HTTP spans and the RPCs they make, each under its module's name.
    const services = new Set(s.otlp.spans.map((x) => x.service));
    expect([...services].sort()).toEqual(expect.arrayContaining(['auth', 'gateway', 'mail-ingest', 'mailbox', 'orgs', 'webhooks']));
    // The gateway's HTTP server spans (SERVER = 2) are the gateway's, though an instrumentation started them outside any module.
    const apiSpans = s.otlp.spans.filter((x) => x.kind === 2 && / \/api\/v1\//.test(x.name));
    expect(apiSpans.map((x) => x.name)).toEqual(expect.arrayContaining(['POST /api/v1/inboxes', 'POST /api/v1/webhooks/endpoints']));
    expect([...new Set(apiSpans.map((x) => x.service))]).toEqual(['gateway']);
  });

  it('gives a reply one trace too, up to the relay accepting it, and links its delivery report to it', async () => {
    await traceOneReply(started());
  });
});
