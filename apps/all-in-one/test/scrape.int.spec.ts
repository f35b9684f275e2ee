/**
 * Metrics an SRE can scrape (issue 33, item 4): the all-in-one process, started as its
 * deployment starts it (its own process, its health port), runs an agent's loop: an inbox, a
 * webhook endpoint, a mail over SMTP (and one to an address that does not exist), the
 * message.received delivery, a reply through the API (refused once at RCPT with a 451, so
 * mail-send retries it: a redelivery of its work item), the relay's acceptance and the
 * message.sent delivery. Then GET /metrics on the health port must show every family of the
 * issue with non-zero values where the loop made some (sampled gauges present, with their
 * value as it is), each measurement naming its module, and
 * labels that stay bounded: route templates, operation names, reasons; no id, no address,
 * no secret.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { createDb, sql } from '@mailroom/db';
import { freePort, signUpTenant, startDnsServer, startTestRelay, waitFor, WebhookReceiver, type TestRelay } from '@mailroom/testing';
import { useTestContext } from './fixtures';

const ROOT = join(__dirname, '..', '..', '..');
const DOMAIN = 'agents.test';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (the exporter's: no escapes in our label values but \\ and \"). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const context = useTestContext({ MAIL_DOMAIN: DOMAIN, SMTP_HOSTNAME: 'mx.agents.test', WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32,::1/128', WEBHOOK_POLL_INTERVAL_MS: '50' });
let relay: TestRelay;
let hooks: WebhookReceiver;
let smtpPort: number;
let healthPort: number;
let gateway: string;

beforeAll(async () => {
  smtpPort = await freePort();
  healthPort = await freePort();
  const httpPort = await freePort();
  // The reply's first hand-over is refused for now (451 at RCPT); the retry is delivered.
  let refused = 0;
  const behaviour = (rcpt: string) => (rcpt === 'ada@sender.test' && refused++ === 0 ? 'tempfail' : 'deliver');
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour });
  context.onStop(() => relay.close());
  hooks = await WebhookReceiver.start();
  context.onStop(() => hooks.close());
  const dns = await startDnsServer([
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
  ]);
  context.onStop(() => dns.close());
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'apps', 'all-in-one', 'dist', 'main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      ...context.env,
      DNS_SERVERS: dns.servers,
      SMTP_PORT: String(smtpPort),
      HTTP_PORT: String(httpPort),
      HEALTH_PORT: String(healthPort),
      SMTP_RELAY_URL: relay.url,
      MIGRATE_ON_START: 'false',
      // Consumer lag and the outbox backlog sampled often, so the scrape finds them soon.
      METRICS_SAMPLE_INTERVAL_MS: '200',
      OTEL_METRICS_EXPORTER: 'prometheus',
      NODE_OPTIONS: '',
    },
  });
  context.onStop(() => (child.exitCode !== null ? Promise.resolve() : new Promise((r) => (child.once('exit', r), child.kill('SIGTERM')))));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`the all-in-one exited with ${child.exitCode}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 60_000, what: 'the all-in-one to be ready' },
  );
  gateway = `http://127.0.0.1:${httpPort}`;
}, 120_000);

const scrape = async (port = healthPort): Promise<{ text: string; samples: Sample[] }> => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await res.text();
  return { text, samples: parseExposition(text) };
};

const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
const series = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** What no label value may look like: our ids, UUIDs, addresses, hex tokens, paths with a value in them. */
const UNBOUNDED = [/\b[a-z]{3}_[0-9a-z]{16,}/i, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i, /@/, /[0-9a-f]{24,}/i, /^\/.*\/[a-z]{3}_/];

describe('GET /metrics on the all-in-one process\'s health port', () => {
  it('shows every family after an agent\'s loop, each measurement naming its module, with bounded labels and nothing secret', async () => {
    const tenant = await signUpTenant(gateway);
    const db = createDb<unknown>({ url: context.env.DATABASE_URL!, schema: 'public', max: 1 });
    await sql`update auth.users set email_verified_at = now() where email = ${tenant.email.toLowerCase()}`.execute(db);
    await db.destroy();
    const { api } = tenant;

    // The loop: an inbox, an endpoint, a mail in, its event delivered, a reply out, its event delivered.
    const inbox = await api.post('/api/v1/inboxes', { username: 'support', display_name: 'Support' });
    expect(inbox.status).toBe(201);
    const endpoint = await api.post('/api/v1/webhooks/endpoints', { url: hooks.url('/hook') });
    expect(endpoint.status).toBe(201);
    hooks.secrets.push(endpoint.body.secret);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await transport.sendMail({ from: 'ada@sender.test', to: inbox.body.address, subject: 'Invoice 42', text: 'Please help.' });
    // And one to nobody: refused at RCPT.
    await expect(transport.sendMail({ from: 'ada@sender.test', to: `nobody-here@${DOMAIN}`, subject: 'Lost', text: 'Anyone?' })).rejects.toThrow(/550/);
    transport.close();
    const received = await waitFor(() => hooks.received.find((d) => d.body?.type === 'message.received'), { timeoutMs: 30_000, what: 'the message.received delivery' });
    const messageId = String(received.body.data.message_id);
    const reply = await api.post(`/api/v1/inboxes/${inbox.body.inbox_id}/messages/${messageId}/reply`, { text_body: 'On it.' });
    expect(reply.status).toBe(200);
    await waitFor(() => relay.received.find((m) => m.rcptTo.includes('ada@sender.test')), { timeoutMs: 30_000, what: 'the reply at the relay' });
    await waitFor(() => hooks.received.find((d) => d.body?.type === 'message.sent'), { timeoutMs: 30_000, what: 'the message.sent delivery' });
    // An id in a path: its series must name the route's template.
    expect((await api.get(`/api/v1/inboxes/${inbox.body.inbox_id}/messages/${messageId}`)).status).toBe(200);
    // An inbox that does not exist: the operation fails with its code.
    const id = String(inbox.body.inbox_id);
    expect((await api.get(`/api/v1/inboxes/${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`)).status).toBe(404);

    // Every family, once the measurements made in the background (the second delivery's, the samples) are in.
    const { text, samples } = await waitFor(
      async () => {
        const scraped = await scrape();
        const s = scraped.samples;
        const ready =
          sum(s, 'mailroom_webhook_attempts_total', { mailroom_webhook_outcome: 'delivered' }) >= 2 &&
          sum(s, 'mailroom_mail_sends_total', { mailroom_send_outcome: 'sent' }) >= 1 &&
          series(s, 'mailroom_consumer_lag', { messaging_consumer_group_name: 'webhooks--dispatch' }).length > 0 &&
          series(s, 'mailroom_outbox_backlog', { mailroom_service: 'mailbox' }).length > 0;
        return ready && scraped;
      },
      { timeoutMs: 30_000, what: 'every family in /metrics' },
    );

    // eslint-disable-next-line no-console -- SCRAPE_TEST_PRINT=1: the page, to look at
    if (process.env.SCRAPE_TEST_PRINT) console.log(text);

    // HTTP server duration and status by route template, the gateway's.
    const http = series(samples, 'http_server_request_duration_count');
    expect(http.filter((s) => s.value > 0).map((s) => [s.labels.http_request_method, s.labels.http_route, s.labels.http_response_status_code])).toEqual(
      expect.arrayContaining([
        ['POST', '/api/v1/inboxes', '201'],
        ['POST', '/api/v1/webhooks/endpoints', '201'],
        ['POST', '/api/v1/inboxes/:inbox_id/messages/:message_id/reply', '200'],
        ['GET', '/api/v1/inboxes/:inbox_id/messages/:message_id', '200'],
      ]),
    );
    expect(new Set(http.map((s) => s.labels.mailroom_service))).toEqual(new Set(['gateway']));
    // RPC duration by operation, each under the service that answered it; errors by code.
    const rpc = series(samples, 'rpc_server_call_duration_count');
    expect(rpc.filter((s) => s.value > 0).map((s) => `${s.labels.mailroom_service} ${s.labels.rpc_method}`)).toEqual(
      expect.arrayContaining(['mailbox mailbox.inbox.create', 'mailbox mailbox.inbox.resolve', 'webhooks webhooks.endpoint.create', 'auth auth.apikey.verify']),
    );
    expect(rpc.every((s) => s.labels.rpc_method!.startsWith(`${s.labels.mailroom_service}.`))).toBe(true);
    // The look-up of the inbox that does not exist failed with its code.
    expect(sum(samples, 'rpc_server_call_duration_count', { rpc_method: 'mailbox.inbox.get', error_type: 'not_found' })).toBe(1);
    expect(http.filter((s) => s.labels.http_response_status_code === '404').map((s) => [s.labels.http_route, s.value])).toEqual([[expect.stringMatching(/^\/api\/v1\/inboxes\/:[a-z_]+$/), 1]]);
    // JetStream: lag and ack pending per durable (as last sampled), redeliveries per durable:
    // the reply's work item, retried after the 451, came to mail-send a second time.
    for (const durable of ['mailbox--inbound', 'webhooks--dispatch', 'mail-send--outbound']) {
      expect(series(samples, 'mailroom_consumer_lag', { messaging_consumer_group_name: durable })).toHaveLength(1);
      expect(series(samples, 'mailroom_consumer_ack_pending', { messaging_consumer_group_name: durable })).toHaveLength(1);
      expect(series(samples, 'mailroom_consumer_redeliveries_total', { messaging_consumer_group_name: durable })).toHaveLength(1);
      expect(series(samples, 'mailroom_consumer_lag', { messaging_consumer_group_name: durable })[0]!.labels.mailroom_service).toBe(durable.split('--')[0]);
    }
    expect(sum(samples, 'mailroom_consumer_redeliveries_total', { messaging_consumer_group_name: 'mail-send--outbound' })).toBe(1);
    // SMTP: sessions, the accepted message with its spam verdict, the refusal by reason.
    expect(sum(samples, 'mailroom_smtp_sessions_total', { mailroom_smtp_session_outcome: 'taken' })).toBeGreaterThanOrEqual(1);
    expect(sum(samples, 'mailroom_smtp_messages_total', { mailroom_smtp_verdict: 'accepted' })).toBeGreaterThanOrEqual(1);
    expect(series(samples, 'mailroom_smtp_messages_total', { mailroom_smtp_verdict: 'accepted' }).every((s) => ['ham', 'spam', 'unscanned'].includes(s.labels.mailroom_spam_verdict!))).toBe(true);
    expect(sum(samples, 'mailroom_smtp_refusals_total', { mailroom_smtp_stage: 'rcpt', mailroom_smtp_reason: 'noSuchUser' })).toBe(1);
    // Sends by outcome (the refused try, then the accepted one); webhook attempts by outcome, and their latency.
    expect(sum(samples, 'mailroom_mail_sends_total', { mailroom_send_outcome: 'retry', mailroom_service: 'mail-send' })).toBe(1);
    expect(sum(samples, 'mailroom_mail_sends_total', { mailroom_send_outcome: 'sent', mailroom_service: 'mail-send' })).toBeGreaterThanOrEqual(1);
    expect(sum(samples, 'mailroom_webhook_attempts_total', { mailroom_webhook_outcome: 'delivered', mailroom_service: 'webhooks' })).toBeGreaterThanOrEqual(2);
    expect(sum(samples, 'mailroom_webhook_attempt_duration_count', { mailroom_webhook_outcome: 'delivered' })).toBeGreaterThanOrEqual(2);
    expect(sum(samples, 'mailroom_webhook_attempt_duration_sum', { mailroom_webhook_outcome: 'delivered' })).toBeGreaterThan(0);
    // The outbox backlog of each service that has one (as last sampled), and the database pools.
    for (const service of ['auth', 'orgs', 'mailbox', 'mail-send', 'domains']) expect(series(samples, 'mailroom_outbox_backlog', { mailroom_service: service })).toHaveLength(1);
    expect(sum(samples, 'db_client_connection_count')).toBeGreaterThan(0);
    expect(sum(samples, 'db_client_connection_max', { db_client_connection_pool_name: 'mailbox' })).toBeGreaterThan(0);
    expect(series(samples, 'db_client_connection_count', { db_client_connection_pool_name: 'mailbox' }).map((s) => s.labels.db_client_connection_state).sort()).toEqual(['idle', 'used']);
    expect(series(samples, 'db_client_connection_pending_requests', { db_client_connection_pool_name: 'webhooks' })).toHaveLength(1);

    // Every measurement of ours names its module; the process is named in target_info.
    const ours = samples.filter((s) => s.name !== 'target_info');
    expect(ours.filter((s) => !s.labels.mailroom_service)).toEqual([]);
    expect(series(samples, 'target_info')[0]!.labels.service_name).toBe('mailroom');
    // Bounded labels: no value an id, an address or a token; routes are templates; few series.
    const values = [...new Set(ours.flatMap((s) => Object.values(s.labels)))];
    expect(values.filter((v) => UNBOUNDED.some((re) => re.test(v)))).toEqual([]);
    expect(http.every((s) => s.labels.http_route === undefined || /^\/api\/v1(\/([a-z0-9_.-]+|:[a-z_]+))*$/.test(s.labels.http_route))).toBe(true);
    expect(ours.length).toBeLessThan(5_000);
    // Nothing secret anywhere in the page.
    for (const secret of [tenant.key, tenant.password, endpoint.body.secret, new URL(context.env.DATABASE_URL!).password].filter((x) => x && x.length >= 6)) expect(text).not.toContain(secret);
  }, 120_000);
});

describe('GET /metrics on a service\'s own process', () => {
  it('names the process after the service, and its measurements after it too', async () => {
    // mailbox as its deployment runs it, beside the all-in-one (their consumers share the durables).
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, 'services', 'mailbox', 'dist', 'main.js')], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, ...context.env, HEALTH_PORT: String(port), METRICS_SAMPLE_INTERVAL_MS: '200', NODE_OPTIONS: '' },
    });
    try {
      const { samples } = await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`mailbox exited with ${child.exitCode}`);
          const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          if (res?.status !== 200) return false;
          const scraped = await scrape(port);
          return series(scraped.samples, 'mailroom_outbox_backlog').length > 0 && series(scraped.samples, 'mailroom_consumer_lag', { messaging_consumer_group_name: 'mailbox--inbound' }).length > 0 && scraped;
        },
        { timeoutMs: 60_000, what: 'mailbox\'s /metrics' },
      );
      expect(series(samples, 'target_info')[0]!.labels.service_name).toBe('mailbox');
      expect(new Set(samples.filter((x) => x.name !== 'target_info').map((x) => x.labels.mailroom_service))).toEqual(new Set(['mailbox']));
      expect(series(samples, 'db_client_connection_max').map((x) => x.labels.db_client_connection_pool_name)).toEqual(['mailbox']);
      expect(series(samples, 'mailroom_outbox_backlog')).toHaveLength(1);
    } finally {
      if (child.exitCode === null) await new Promise((r) => (child.once('exit', r), child.kill('SIGTERM')));
    }
  }, 90_000);
});
