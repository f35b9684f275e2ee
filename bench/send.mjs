// npm run bench:send — replies through the API (every service in one child process, as
// `npm start` runs them) to a provider that is Postfix's smtp-sink: gateway -> mailbox (reply
// stored in its thread) -> mail.outbound -> mail-send (checks, MIME, DKIM RSA-2048, VERP,
// pooled SMTP with DSN requested) -> smtp-sink -> message.sent. Measured in one run:
//   1. our path: --messages replies, --concurrency API calls in flight: messages/s reaching
//      message.sent, and p50/p99 from the API call to message.sent (seen on the bus);
//   2. bare limit: nodemailer sending the same messages (same headers, bodies, DKIM key, DSN
//      request) straight to the same smtp-sink, pooled like our provider, same concurrency;
//   3. paced: --rates replies/s (25,100) for --paced-seconds (10): p50/p99 below saturation.
// Needs smtp-sink (Debian package postfix). Options: --messages N (3000), --concurrency N (32),
// --rates r,r (25,100), --paced-seconds s (10),
// --separate (one process per service), --profile (V8 CPU profiles into /tmp/mailroom-prof),
// --perf (symbol maps for Linux perf: `perf record -g -p <pid>` sees JavaScript frames).
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import net from 'node:net';
import nodemailer from 'nodemailer';
import { connectTestBus, createTestContext, freePort, signUpTenant, startDnsServer, waitFor } from '@mailroom/testing';
import { eventSubject } from '@mailroom/contracts';
import { arg, percentile, postfixTool, startProcess } from './common.mjs';
import { cpuPerUnit, cpuSnapshot, natsPidsOf, postgresPidsOf } from './cpu.mjs';

const SMTP_SINK = postfixTool('smtp-sink', 'bench:send');
const MESSAGES = arg('messages', 3000);
const CONCURRENCY = arg('concurrency', 32);
// Paced runs after the burst, in replies/s: latency when the platform is not saturated.
const RATES = (process.argv.includes('--rates') ? process.argv[process.argv.indexOf('--rates') + 1] : '25,100').split(',').map(Number);
const PACED_SECONDS = arg('paced-seconds', 10);
const WARMUP = 300;
// --separate: each service in its own process, as deployed (default: all in one, as `npm start`).
const SEPARATE = process.argv.includes('--separate');
const DOMAIN = 'bench.test';
const profile = process.argv.includes('--perf') ? ['--perf-basic-prof-only-functions'] : process.argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir=/tmp/mailroom-prof'] : [];
const now = () => performance.timeOrigin + performance.now();
const children = [];
let stopping = false;

// A reply of ordinary size: a few paragraphs of text and the same as HTML.
const paragraph = 'Thanks for writing. I looked into the invoice and the amounts match what we agreed; the attachment you mentioned was not in the message, so please send it again when you can. ';
const TEXT = `${paragraph.repeat(4)}\n\nBest,\nThe bench agent`;
const HTML = `<p>${paragraph.repeat(4)}</p><p>Best,<br>The bench agent</p>`;

function startSink(port) {
  // As root, smtp-sink must drop privileges (-u); -m: sessions it serves at once.
  const user = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child = spawn(SMTP_SINK, [...user, '-m', '512', `127.0.0.1:${port}`, '1024'], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`smtp-sink exited (${code ?? signal})`);
  });
  return waitFor(
    () =>
      new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(child)));
        s.on('error', () => resolve(false));
      }),
    { timeoutMs: 10_000, what: 'smtp-sink listening' },
  );
}

async function startPlatform(env) {
  if (!SEPARATE) {
    const { child, endpoints } = await startProcess('all-in-one', env, { children, nodeArgs: profile, ready: (e) => e.http && e.smtp });
    return { endpoints, procs: { platform: () => [child.pid] } };
  }
  const endpoints = {};
  const procs = {};
  for (const name of ['orgs', 'auth', 'mailbox', 'mail-send', 'webhooks', 'mail-ingest', 'gateway']) {
    const started = await startProcess(name, env, { children, nodeArgs: profile });
    Object.assign(endpoints, started.endpoints);
    procs[name] = () => [started.child.pid];
  }
  return { endpoints, procs };
}

/** Runs `task(i)` for i in [0, n) with `concurrency` in flight. */
async function pool(n, concurrency, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dkimPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const dns = await startDnsServer([
  { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
  { name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}` },
]);
const sinkPort = await freePort();
const ctx = await createTestContext({
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  MIGRATE_ON_START: 'true',
  MAIL_DOMAIN: DOMAIN,
  SMTP_PORT: '0',
  SMTP_HOST: '127.0.0.1',
  DNS_SERVERS: dns.servers,
  RSPAMD_URL: 'off',
  RATE_LIMIT_PER_SECOND: '0',
  SEND_RATE_PER_INBOX_PER_MINUTE: '0',
  SEND_RATE_PER_ORG_PER_MINUTE: '0',
  SMTP_RELAY_URL: `smtp://127.0.0.1:${sinkPort}`,
  DKIM_PRIVATE_KEY: dkimPem,
  DKIM_SELECTOR: 'mailroom',
});
try {
  const sink = await startSink(sinkPort);
  const platform = await startPlatform(ctx.env);
  const { endpoints } = platform;
  const procs = { ...platform.procs, 'smtp-sink': () => [sink.pid], postgres: () => postgresPidsOf(ctx.env.DATABASE_URL), 'nats-server': () => natsPidsOf(ctx.env.NATS_URL) };

  // A new user, as an agent works: signs up, makes an API key and an inbox, receives one message by SMTP.
  const { api } = await signUpTenant(endpoints.http, 'bench@example.com');
  const inbox = (await api.post('/api/v1/inboxes', { username: 'support', display_name: 'Support Team' })).body;
  const smtpPort = Number(new URL(endpoints.smtp).port);
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
    .sendMail({ from: 'Ada <ada@sender.test>', to: inbox.address, subject: 'Invoice 42', text: 'Please help.', messageId: '<orig-42@sender.test>' });
  const original = await waitFor(async () => (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data?.[0], { timeoutMs: 30_000, what: 'the inbound message stored' });

  // message.sent as it crosses the bus (a plain subscription sees every JetStream publish).
  const bus = await connectTestBus(ctx.env, 'tests', 'bench-send');
  const sentAt = new Map();
  const sub = bus.nc.subscribe(bus.ns.subject(eventSubject('message.sent')));
  void (async () => {
    for await (const m of sub) {
      const e = m.json();
      if (!sentAt.has(e.data.message_id)) sentAt.set(e.data.message_id, now());
    }
  })();
  await bus.nc.flush();

  /** n replies, CONCURRENCY in flight, or, paced, started at `pace` per second (latency below capacity). */
  async function replies(n, pace) {
    const calledAt = new Map();
    const started = now();
    const one = async (i) => {
      if (pace) {
        const due = started + (i * 1000) / pace;
        if (due > now()) await new Promise((r) => setTimeout(r, due - now()));
      }
      const t0 = now();
      const res = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: TEXT, html_body: HTML });
      if (res.status !== 200) throw new Error(`reply answered ${res.status}: ${JSON.stringify(res.body)}`);
      calledAt.set(res.body.message_id, t0);
    };
    if (pace) await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
    else await pool(n, CONCURRENCY, one);
    const answeredMs = now() - started;
    await waitFor(() => [...calledAt.keys()].every((id) => sentAt.has(id)), { timeoutMs: 600_000, intervalMs: 20, what: 'every reply announced as message.sent' });
    const ids = [...calledAt.keys()];
    const lastSent = Math.max(...ids.map((id) => sentAt.get(id)));
    const latencies = ids.map((id) => sentAt.get(id) - calledAt.get(id)).sort((a, b) => a - b);
    return { rate: n / ((lastSent - started) / 1000), answeredRate: n / (answeredMs / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) };
  }

  // The same message each reply makes, sent by nodemailer straight to smtp-sink.
  const direct = nodemailer.createTransport({
    host: '127.0.0.1',
    port: sinkPort,
    secure: false,
    ignoreTLS: true,
    name: DOMAIN,
    pool: true,
    maxConnections: 8,
    dkim: { domainName: DOMAIN, keySelector: 'mailroom', privateKey: dkimPem },
  });
  async function directSends(n) {
    const started = now();
    await pool(n, CONCURRENCY, async (i) => {
      await direct.sendMail({
        from: `Support Team <${inbox.address}>`,
        to: 'ada@sender.test',
        subject: 'Re: Invoice 42',
        text: TEXT,
        html: HTML,
        messageId: `<bench-${i}-${Date.now()}@${DOMAIN}>`,
        inReplyTo: '<orig-42@sender.test>',
        references: '<orig-42@sender.test>',
        envelope: { from: `bounces+bench-${i}@${DOMAIN}`, to: ['ada@sender.test'] },
        dsn: { id: `bench-${i}`, return: 'headers', notify: ['success', 'failure', 'delay'] },
      });
    });
    return { rate: n / ((now() - started) / 1000) };
  }

  // Warm-up of both sides: connections, JIT, the database's caches.
  await replies(WARMUP);
  await directSends(WARMUP);

  const cpu0 = cpuSnapshot(procs);
  const ours = await replies(MESSAGES);
  const cpu1 = cpuSnapshot(procs);
  const bare = await directSends(MESSAGES);
  const cpu2 = cpuSnapshot(procs);
  const paced = [];
  for (const target of RATES) paced.push({ target, ...(await replies(target * PACED_SECONDS, target)) });
  direct.close();
  sub.unsubscribe();
  await bus.drain();

  const perMessage = (a, b) => cpuPerUnit(a, b, MESSAGES);
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const ms = (n) => `${n.toFixed(1)} ms`;
  console.log(`\nbench:send — ${fmt(MESSAGES)} replies of ${fmt(TEXT.length + HTML.length)} bytes (text + HTML), ${CONCURRENCY} in flight, API key, DKIM RSA-2048, provider smtp-sink on loopback; ${SEPARATE ? 'one process per service' : 'all services in one process'}\n`);
  console.log(`  Mailroom (API -> message.sent)  ${fmt(ours.rate).padStart(6)} messages/s   API call -> message.sent p50 ${ms(ours.p50)}  p99 ${ms(ours.p99)}  max ${ms(ours.max)}   (API answered at ${fmt(ours.answeredRate)}/s)`);
  console.log(`  nodemailer straight to the sink  ${fmt(bare.rate).padStart(6)} messages/s`);
  console.log(`  Mailroom / direct: ${((100 * ours.rate) / bare.rate).toFixed(1)}%   (target >= 50%)`);
  console.log(`  CPU ms per message, Mailroom: ${perMessage(cpu0, cpu1)}`);
  console.log(`  CPU ms per message, direct:   ${perMessage(cpu1, cpu2)}`);
  for (const p of paced) console.log(`paced at ${p.target} replies/s for ${PACED_SECONDS} s (${fmt(p.rate)} messages/s sent): API call -> message.sent p50 ${ms(p.p50)}  p99 ${ms(p.p99)}  max ${ms(p.max)}`);
} finally {
  stopping = true;
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 2000));
  await dns.close();
  await ctx.cleanup();
}
