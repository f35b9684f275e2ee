// npm run bench:scale — does throughput grow with instances (issue 34, part 5)? On three
// nats-servers clustered on loopback (every stream R3) and a PostgreSQL of the run's own (as
// test:faults brings them up, faults/setup.mjs), with the busy services as separate processes:
//   round 1: one instance each of mail-ingest, mailbox and webhooks;
//   round 2: a second instance of each started beside them (same run, same servers), and
//   warmed up as the first were before round 1;
// each round sends --mails mails over SMTP (16 in flight, spread over the SMTP edges) to 10
// inboxes whose organization has two webhook endpoints subscribed: inbound mails/s stored
// (PostgreSQL rows), and webhook deliveries/s (2 per mail, at the receivers, signatures
// verified). CPU per mail of every process from /proc/<pid>/stat before and after each round.
// Bare limits in the same run: the same sender to a bare smtp-server that discards
// (bench/bare-smtp-server.mjs), and signed POSTs of the same size straight to the same
// receivers, 4 in flight per receiver as the service sends. Then the arithmetic for a 3-node
// production cluster from the CPU per mail. Options: --mails N (2000).
import { execFileSync, fork } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { createDb, sql } from '@mailroom/db';
import { waitFor } from '@mailroom/testing';
import { arg, root } from './common.mjs';
import { cpuOf } from './cpu.mjs';

process.env.FAULTS_PORT_BASE ??= '34322';
const { INBOXES, MAIL_DOMAIN, PORTS, bringUp, tenant } = await import('../faults/setup.mjs');
const MAILS = arg('mails', 2000);
const IN_FLIGHT = 16;
const BUSY = { 'mail-ingest': 1, mailbox: 1, webhooks: 1 };
const fmt = (n) => Math.round(n).toLocaleString('en-US');

/** The postmaster and its backends (only this run's PostgreSQL, not the machine's). */
function postgresPids(postmaster) {
  if (!postmaster) return [];
  try {
    return [postmaster, ...execFileSync('pgrep', ['-P', String(postmaster)]).toString().trim().split('\n').map(Number)];
  } catch {
    return [postmaster];
  }
}

async function pool(n, inFlight, task) {
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < n) await task(next++);
  }));
}

function transport(port) {
  return nodemailer.createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: IN_FLIGHT, maxMessages: Infinity, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
}

function mailOf(i) {
  const raw = [`From: Sender ${i} <s${i}@sender.test>`, `To: agent${i % INBOXES}@${MAIL_DOMAIN}`, `Subject: Scale mail ${i}`, `Message-ID: <scale-${i}@sender.test>`, `Date: ${new Date().toUTCString()}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', `Mail ${i} of bench:scale. ${'Some text of an ordinary mail. '.repeat(30)}`, ''].join('\r\n');
  return { envelope: { from: `s${i}@sender.test`, to: [`agent${i % INBOXES}@${MAIL_DOMAIN}`] }, raw };
}

/** Sends mails [from, from + MAILS) over `ports` (mail i to ports[i % n]). */
async function send(ports, from) {
  const transports = ports.map(transport);
  try {
    await pool(MAILS, IN_FLIGHT, (k) => transports[k % transports.length].sendMail(mailOf(from + k)));
  } finally {
    for (const t of transports) t.close();
  }
}

const up = await bringUp();
try {
  const platform = await up.platform({ orgs: 1, auth: 1, ...BUSY, gateway: 1 });
  await tenant(up);
  const db = createDb({ url: up.ctx.env.DATABASE_URL, schema: 'mailbox', max: 2 });
  const storedCount = async () => Number((await sql`select count(*)::int as n from messages where direction = 'inbound'`.execute(db)).rows[0].n);
  const deliveries = () => up.receivers.reduce((n, r) => n + r.events.size, 0);

  // Warm-up (JIT, connections, caches) of the instances a round is about to measure.
  async function warmUp(edges, from) {
    const stored0 = await storedCount();
    const delivered0 = deliveries();
    await send(edges, from);
    await waitFor(async () => (await storedCount()) >= stored0 + MAILS && deliveries() >= delivered0 + 2 * MAILS, { timeoutMs: 600_000, intervalMs: 100, what: 'the warm-up stored and delivered' });
  }
  await warmUp([PORTS.smtp(0)], 1_000_000);

  const rounds = [];
  async function round(label, edges, from) {
    const procs = {};
    for (const inst of platform.instances.concat(extra?.instances ?? [])) (procs[inst.service] ??= []).push(inst);
    const cpu = () => {
      const snap = {};
      for (const [service, list] of Object.entries(procs)) snap[service] = list.reduce((t, i) => t + i.cpu(), 0);
      snap['nats-server (3 nodes)'] = up.nats.pids().reduce((t, pid) => t + cpuOf(pid), 0);
      snap.postgres = postgresPids(up.postgres.pids()[0]).reduce((t, pid) => t + cpuOf(pid), 0);
      snap['bench (sender, receivers)'] = (process.cpuUsage().user + process.cpuUsage().system) / 1e6;
      return snap;
    };
    const stored0 = await storedCount();
    const delivered0 = deliveries();
    const cpu0 = cpu();
    const instCpu0 = Object.fromEntries(Object.entries(procs).map(([service, list]) => [service, list.map((inst) => inst.cpu())]));
    const t0 = Date.now();
    await send(edges, from);
    const acceptedMs = Date.now() - t0;
    await waitFor(async () => (await storedCount()) >= stored0 + MAILS, { timeoutMs: 900_000, intervalMs: 50, what: `${label}: every mail stored` });
    const storedMs = Date.now() - t0;
    await waitFor(() => deliveries() >= delivered0 + 2 * MAILS, { timeoutMs: 900_000, intervalMs: 50, what: `${label}: every delivery at the receivers` });
    const deliveredMs = Date.now() - t0;
    const cpu1 = cpu();
    const perMail = Object.fromEntries(Object.keys(cpu1).map((k) => [k, ((cpu1[k] - cpu0[k]) * 1000) / MAILS]));
    const perInstance = Object.fromEntries(Object.entries(procs).map(([service, list]) => [service, list.length]));
    // Each instance of a service run twice: its CPU over the round's mails (the two add up to the service's).
    const instancesOf = Object.fromEntries(
      Object.entries(procs)
        .filter(([, list]) => list.length > 1)
        .map(([service, list]) => [service, list.map((inst, k) => ((inst.cpu() - instCpu0[service][k]) * 1000) / MAILS)]),
    );
    rounds.push({ label, accepted: MAILS / (acceptedMs / 1000), stored: MAILS / (storedMs / 1000), delivered: (2 * MAILS) / (deliveredMs / 1000), perMail, perInstance, instancesOf });
  }

  let extra;
  await round('1 instance each', [PORTS.smtp(0)], 0);
  extra = await up.platform(BUSY, 1);
  // The second instances are warmed up as the first were: else round 2 pays their JIT.
  await warmUp([PORTS.smtp(0), PORTS.smtp(1)], 3_000_000);
  await round('2 instances each', [PORTS.smtp(0), PORTS.smtp(1)], MAILS);

  // Bare limits: the same sender to a bare smtp-server; signed POSTs straight to the receivers.
  const bare = fork(path.join(root, 'bench/bare-smtp-server.mjs'), [String(PORTS.bareSmtp)]);
  await new Promise((resolve) => bare.once('message', resolve));
  let t0 = Date.now();
  await send([PORTS.bareSmtp], 2_000_000);
  const bareSmtp = MAILS / ((Date.now() - t0) / 1000);
  bare.kill('SIGTERM');
  const body = (i) => JSON.stringify({ id: `evt_bare${i}${randomUUID()}`, type: 'message.received', created_at: new Date().toISOString(), data: { message_id: 'msg_x', subject: `Scale mail ${i}`, extracted_text: 'Some text of an ordinary mail. '.repeat(8) } });
  t0 = Date.now();
  await Promise.all(up.receivers.map((r) =>
    pool(MAILS, 4, async (i) => {
      const raw = body(i);
      const ts = String(Math.floor(Date.now() / 1000));
      const res = await fetch(r.url, { method: 'POST', body: raw, headers: { 'content-type': 'application/json', 'x-service-timestamp': ts, 'x-service-signature': createHmac('sha256', r.secret).update(`${ts}.${raw}`).digest('hex') } });
      await res.arrayBuffer();
    }),
  ));
  const barePosts = (2 * MAILS) / ((Date.now() - t0) / 1000);
  await db.destroy();

  const [one, two] = rounds;
  const load = execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ');
  console.log(`\nbench:scale — ${fmt(MAILS)} mails of ~1 KB per round over SMTP (${IN_FLIGHT} in flight), 2 webhook endpoints (2 deliveries per mail); 3 NATS nodes on loopback, streams R3; PostgreSQL of its own; rspamd off; ${execFileSync('nproc').toString().trim()} cores, load average at the end ${load}\n`);
  console.log(`                                    1 instance    2 instances   2 / 1`);
  for (const [label, key] of [['inbound mails/s accepted (250)', 'accepted'], ['inbound mails/s stored', 'stored'], ['webhook deliveries/s', 'delivered']]) {
    console.log(`  ${label.padEnd(32)} ${fmt(one[key]).padStart(10)}  ${fmt(two[key]).padStart(12)}   ${(two[key] / one[key]).toFixed(2)}`);
  }
  console.log(`  bare smtp-server (discards), same sender   ${fmt(bareSmtp)} mails/s accepted`);
  console.log(`  bare signed POSTs to the same receivers    ${fmt(barePosts)} deliveries/s (4 in flight per receiver)`);
  for (const r of rounds) {
    console.log(`\nCPU ms per mail, ${r.label} (all instances of a service together; instances: ${Object.entries(r.perInstance).map(([s, n]) => `${s} ${n}`).join(', ')}):`);
    console.log(`  ${Object.entries(r.perMail).map(([k, v]) => `${k} ${v.toFixed(2)}${r.instancesOf[k] ? ` (${r.instancesOf[k].map((x, i) => `#${i + 1} ${x.toFixed(2)}`).join(', ')})` : ''}`).join(', ')}`);
    const total = Object.values(r.perMail).reduce((a, b) => a + b, 0);
    console.log(`  total ${total.toFixed(2)} ms per mail: ${fmt(2000 / total)} mails/s is what 2 fully free cores could give at this cost`);
  }
  // The arithmetic: services and NATS on three nodes, PostgreSQL on its own machine. From each
  // round: the 2-instance round's CPU per mail is inflated by sharing this machine's cores
  // (docs/benchmarks.md), so the 1-instance round is the estimate and the other a lower bound.
  const cores = 4;
  const nodes = 3;
  console.log(`\n3-node production cluster of ${nodes} nodes x ${cores} cores, PostgreSQL on ${cores} cores of its own, by this arithmetic:`);
  for (const r of rounds) {
    const p = r.perMail;
    const services = ['mail-ingest', 'mailbox', 'webhooks', 'gateway', 'auth', 'orgs'].reduce((t, k) => t + (p[k] ?? 0), 0);
    const nats = p['nats-server (3 nodes)'];
    const clusterRate = (nodes * cores * 1000) / (services + nats);
    const pgRate = (cores * 1000) / p.postgres;
    console.log(`  from the round with ${r.label}: services ${services.toFixed(2)} ms + NATS ${nats.toFixed(2)} ms (all three replicas; ${(nats / 3).toFixed(2)} ms on each node) per mail: ${fmt(clusterRate)} mails/s on the nodes;`);
    console.log(`    PostgreSQL ${p.postgres.toFixed(2)} ms per mail: ${fmt(pgRate)} mails/s => about ${fmt(Math.min(clusterRate, pgRate))} mails/s stored and announced (twice that in deliveries to 2 endpoints), bound by ${clusterRate < pgRate ? 'the nodes' : 'PostgreSQL'}`);
  }
  console.log(`  on this machine every process shares ${execFileSync('nproc').toString().trim()} cores with the load's sender and other work: a second instance can only use cores the first left idle`);
} finally {
  await up.stop();
}
process.exit(0);
