// npm run bench:ingest — Postfix's smtp-source sends 10,000 messages of 10 KB to the SMTP edge
// (every service in one child process, rspamd on unless --no-rspamd), first over 16 sessions
// with many messages per connection (-d), then one message per connection over 128 sessions;
// and the same loads to a bare smtp-server that discards. Printed: accepted messages/s, and for
// the edge the time until every message is stored and announced (message.received).
// Needs smtp-source (Debian package postfix). Options: --messages N, --no-rspamd, --profile, --perf.
import { fork, spawn } from 'node:child_process';
import path from 'node:path';
import { ApiClient, EventTap, createTestContext, startDnsServer } from '@mailroom/testing';
import { arg, postfixTool, root, startProcess } from './common.mjs';
import { childrenCpu, cpuPerUnit, cpuSnapshot, natsPidsOf, pidsOf, postgresPidsOf } from './cpu.mjs';

const SMTP_SOURCE = postfixTool('smtp-source', 'bench:ingest');
const MESSAGES = arg('messages', 10_000);
const rspamd = !process.argv.includes('--no-rspamd');
// --profile: a V8 CPU profile of the platform process into /tmp/mailroom-prof; --perf: perf
// maps of its JIT code (/tmp/perf-<pid>.map), for `perf record -g -p <pid>` during the run.
const profile = process.argv.includes('--perf') ? ['--perf-basic-prof-only-functions'] : process.argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir=/tmp/mailroom-prof'] : [];
const children = [];

// Asynchronous: this process also serves the DNS zone and reads the events while it runs.
function smtpSource(port, sessions, perConnection) {
  const args = ['-s', String(sessions), '-m', String(MESSAGES), '-l', '10240', '-f', 'bench@sender.test', '-t', 'bench@bench.test', '-M', 'bench.test'];
  if (perConnection) args.unshift('-d');
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(SMTP_SOURCE, [...args, `127.0.0.1:${port}`], { stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e9) : reject(new Error(`smtp-source exited with ${code}`))));
  });
}

const dns = await startDnsServer([
  { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
  { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
]);
const ctx = await createTestContext({
  LOG_LEVEL: 'info',
  MIGRATE_ON_START: 'true',
  MAIL_DOMAIN: 'bench.test',
  SMTP_PORT: '0',
  SMTP_HOST: '127.0.0.1',
  SMTP_MAX_CLIENTS: '2000',
  SMTP_MAX_CONNECTIONS_PER_IP: '1000',
  SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: '0',
  DNS_SERVERS: dns.servers,
  RSPAMD_URL: rspamd ? 'http://127.0.0.1:11333' : 'off',
  RATE_LIMIT_PER_SECOND: '0',
});
const results = [];
try {
  const platform = await startProcess('all-in-one', ctx.env, { children, nodeArgs: profile, ready: (e) => e.http && e.smtp });
  const { http, smtp } = platform.endpoints;
  const procs = {
    platform: () => [platform.child.pid],
    rspamd: () => pidsOf('rspamd'),
    postgres: () => postgresPidsOf(ctx.env.DATABASE_URL),
    'nats-server': () => natsPidsOf(ctx.env.NATS_URL),
  };
  const cpu = () => ({ ...cpuSnapshot(procs, 'bench (DNS, event tap)'), 'smtp-source': childrenCpu() });
  const smtpPort = Number(new URL(smtp).port);
  const anon = new ApiClient(http);
  const signup = await anon.post('/api/v1/auth/signup', { email: 'bench@example.com', password: 'correct horse battery' });
  const api = anon.withToken(signup.body.access_token);
  const inbox = await api.post('/api/v1/inboxes', { username: 'bench' });
  if (inbox.status !== 201) throw new Error(`inbox: ${inbox.status}`);
  const tap = await EventTap.start(ctx.env);
  const bare = fork(path.join(root, 'bench/bare-smtp-server.mjs'));
  children.push(bare);
  const barePort = await new Promise((resolve) => bare.once('message', (m) => resolve(m.port)));

  let announced = 0;
  for (const [label, sessions, perConnection] of [
    ['16 sessions, many messages per connection', 16, true],
    ['128 sessions, one message per connection', 128, false],
  ]) {
    const bareSeconds = await smtpSource(barePort, sessions, perConnection);
    const cpu0 = cpu();
    const started = Date.now();
    const edgeSeconds = await smtpSource(smtpPort, sessions, perConnection);
    const target = announced + MESSAGES;
    while (tap.events.filter((e) => e.type === 'message.received').length < target) {
      if (Date.now() - started > 600_000) throw new Error('not all messages were announced within 10 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    announced = target;
    const storedSeconds = (Date.now() - started) / 1000;
    const cpu1 = cpu();
    const perMessage = cpuPerUnit(cpu0, cpu1, MESSAGES);
    results.push({ label, bare: MESSAGES / bareSeconds, edge: MESSAGES / edgeSeconds, stored: MESSAGES / storedSeconds, storedSeconds, perMessage });
  }
  await tap.stop();
  console.log(`\nbench:ingest — ${MESSAGES} messages of 10 KB per load, rspamd ${rspamd ? 'on' : 'off'}, SPF/DKIM/DMARC/ARC on (DNS on loopback)\n`);
  for (const r of results) {
    console.log(`${r.label}`);
    console.log(`  bare smtp-server (discards)   ${r.bare.toFixed(0).padStart(6)} msg/s accepted`);
    console.log(`  Mailroom edge                 ${r.edge.toFixed(0).padStart(6)} msg/s accepted (${((100 * r.edge) / r.bare).toFixed(1)}% of bare)`);
    console.log(`  stored and announced          ${r.stored.toFixed(0).padStart(6)} msg/s (all ${MESSAGES} after ${r.storedSeconds.toFixed(1)} s)`);
    console.log(`  CPU ms per message until all were announced: ${r.perMessage}`);
  }
  console.log('\ntargets: acceptance >= 50% of bare; >= 500 msg/s stored and announced (many per connection)');
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 2000));
  await dns.close();
  await ctx.cleanup();
}
