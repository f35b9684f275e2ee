/**
 * One inbound mail is one trace (issue 33, item 1), seen as an SRE sees it: the services on
 * the mail's path (mail-ingest, mailbox, webhooks) run as their own processes, started as
 * their deployments start them (`node --require telemetry-preload services/<name>/dist/main.js`),
 * exporting OTLP/HTTP (JSON) to a receiver in this test; the others run in the test's process,
 * untraced. A mail sent over SMTP to an inbox with a webhook endpoint must give one trace:
 * the edge's message span -> mail.inbound publish -> mailbox's handling -> the
 * message.received publish -> webhooks' handling -> the delivery attempt -> its HTTP POST,
 * which carries the trace's traceparent to the receiver. No attribute of any span holds a
 * key, a secret, a password or the message's text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { createDb, sql } from '@mailroom/db';
import { freePort, signUpTenant, startDnsServer, waitFor, WebhookReceiver, type ApiClient, type Tenant } from '@mailroom/testing';
import { startPlatform, type Platform } from '../src/platform';
import { useTestContext } from './fixtures';

const ROOT = join(__dirname, '..', '..', '..');
const PRELOAD = join(ROOT, 'libs', 'platform', 'dist', 'telemetry-preload.js');
const DOMAIN = 'agents.test';
const TRACED = ['mailbox', 'webhooks', 'mail-ingest'] as const;

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

const attr = (span: Span, key: string): unknown => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v && (v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue);
};

const context = useTestContext({
  MAIL_DOMAIN: DOMAIN,
  SMTP_HOSTNAME: 'mx.agents.test',
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32,::1/128',
  WEBHOOK_POLL_INTERVAL_MS: '50',
});
let otlp: OtlpReceiver;
let platform: Platform;
let smtpPort: number;
let tenant: Tenant;
let hooks: WebhookReceiver;
const children: ChildProcess[] = [];

/** Starts a service as its own traced process and waits until it is ready (its /readyz). */
async function startTraced(name: (typeof TRACED)[number], env: Record<string, string>): Promise<void> {
  const healthPort = await freePort();
  const child = spawn(process.execPath, ['--require', PRELOAD, join(ROOT, 'services', name, 'dist', 'main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env, HEALTH_PORT: String(healthPort), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100', NODE_OPTIONS: '' },
  });
  children.push(child);
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 30_000, what: `${name} to be ready` },
  );
}

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  const dns = await startDnsServer([
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
  ]);
  context.onStop(() => dns.close());
  smtpPort = await freePort();
  const env: Record<string, string> = { ...context.env, DNS_SERVERS: dns.servers, SMTP_PORT: String(smtpPort) };
  platform = await startPlatform({ env, migrate: true, services: ['orgs', 'auth', 'domains', 'gateway'] });
  context.onStop(() => platform.stop());
  context.onStop(async () => {
    await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => (c.once('exit', r), c.kill('SIGTERM'))))));
    await otlp.close();
  });
  for (const name of TRACED) await startTraced(name, env);
  const gateway = platform.services.gateway?.endpoints.http;
  if (!gateway) throw new Error('the gateway is not running');
  tenant = await signUpTenant(gateway);
  const db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
  await sql`update auth.users set email_verified_at = now() where email = ${tenant.email.toLowerCase()}`.execute(db);
  await db.destroy();
  hooks = await WebhookReceiver.start();
  context.onStop(() => hooks.close());
}, 120_000);

it('follows one inbound mail from the SMTP edge to the webhook receiver in one trace, and no attribute holds a secret', async () => {
  const api: ApiClient = tenant.api;
  const inbox = await api.post('/api/v1/inboxes', { username: 'traced', display_name: 'Traced' });
  expect(inbox.status).toBe(201);
  const endpoint = await api.post('/api/v1/webhooks/endpoints', { url: hooks.url('/hook') });
  expect(endpoint.status).toBe(201);
  hooks.secrets.push(endpoint.body.secret);

  const marker = `body-marker-${Date.now()}`;
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
  await transport.sendMail({ from: 'ada@sender.test', to: inbox.body.address, subject: `subject ${marker}`, text: `text ${marker}` });
  transport.close();

  const delivered = await waitFor(() => hooks.received.find((d) => d.body?.type === 'message.received'), { timeoutMs: 30_000, what: 'the message.received delivery' });
  const traceparent = String(delivered.headers.traceparent ?? '');
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const [, traceId, postSpanId] = traceparent.split('-');

  // Every span of the trace, down to the POST the receiver answered (exported within a few batches).
  const byId = await waitFor(
    () => {
      const spans = new Map(otlp.spans.filter((s) => s.traceId === traceId).map((s) => [s.spanId, s]));
      return spans.has(postSpanId!) && [...spans.values()].some((s) => s.name === 'smtp message') && spans;
    },
    { timeoutMs: 20_000, what: `the spans of trace ${traceId}` },
  );
  const chain: Span[] = [];
  for (let s = byId.get(postSpanId!); s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) chain.unshift(s);
  // The root is the edge's message, and nothing of the chain is missing.
  expect(chain[0]!.parentSpanId || undefined).toBeUndefined();
  const named = chain.map((s) => `${s.service}: ${s.name}`);
  const expected = [
    'mail-ingest: smtp message',
    'mail-ingest: publish mail.inbound',
    'mailbox: process mail.inbound',
    'mailbox: publish events.message.received',
    'webhooks: process events.message.received',
    'webhooks: webhook delivery attempt',
    'webhooks: POST',
  ];
  expect(named.filter((n) => expected.includes(n))).toEqual(expected);
  expect(named[0]).toBe(expected[0]);
  expect(named.at(-1)).toBe('webhooks: POST');
  // eslint-disable-next-line no-console -- TRACE_TEST_PRINT=1: the chain, to look at
  if (process.env.TRACE_TEST_PRINT) console.log(named.join('\n'), `\n${byId.size} spans in the trace, ${otlp.spans.length} in all`);

  const publish = chain.find((s) => s.name === 'publish mail.inbound')!;
  expect([attr(publish, 'messaging.system'), attr(publish, 'messaging.destination.name'), attr(publish, 'messaging.operation.type')]).toEqual(['nats', 'mail.inbound', 'send']);
  const consumed = chain.find((s) => s.name === 'process events.message.received')!;
  expect([attr(consumed, 'messaging.consumer.group.name'), attr(consumed, 'messaging.message.id'), Number(attr(consumed, 'messaging.nats.message.delivery_count'))]).toEqual([
    'webhooks--dispatch',
    delivered.body.id,
    1,
  ]);
  // The recipients' lookup at RCPT is in the mail's trace too.
  expect([...byId.values()].some((s) => s.service === 'mail-ingest' && s.name === 'rpc mailbox.inbox.resolve')).toBe(true);

  // Nothing secret or of the message in any attribute of any span exported (all traces).
  const secrets = [tenant.key, endpoint.body.secret, tenant.password, marker, new URL(context.env.DATABASE_URL!).password].filter((s) => s && s.length >= 6);
  const values = otlp.spans.flatMap((s) => s.attributes.map((a) => `${s.name} ${a.key}=${JSON.stringify(a.value)}`));
  expect(values.length).toBeGreaterThan(0);
  expect(values.filter((v) => secrets.some((secret) => v.includes(secret)))).toEqual([]);
  expect(values.filter((v) => /\b[\w.]*(password|secret|token|authorization|api_key)[\w.]*=/i.test(v))).toEqual([]);
});
