// npm run bench:webhooks — events published on NATS, fanned out by the webhooks service (its
// own process, as in production) to 4 endpoints on 4 local receivers: through the EVENTS
// consumer, PostgreSQL (one pending delivery per event and endpoint, claimed, one attempt row
// each) and a signed HTTP POST. Measured in one run:
//   1. burst: 20,000 events (80,000 deliveries) published as fast as NATS takes them:
//      deliveries/s, and p50/p99 from publish to receipt;
//   2. bare limit: an undici loop POSTing the same 80,000 bodies to the same receivers with
//      the same bound (4 in flight per receiver), no bus, no database; run just before and
//      just after the burst, and the service compared with the mean of the two;
//   3. paced: 250, 500 and 1,000 events/s (x4 deliveries) for --paced-seconds each: p50/p99
//      publish to receipt.
//   4. floors: the service stopped, the least durable dispatcher (bench/webhook-floor.mjs) takes
//      the same burst between two more bare loops: how close to bare any service keeping the
//      issue's rows can come on this machine; then the same dispatcher writing nothing at all.
// Options: --events <n> (20000), --rates <events/s,...> (250,500,1000), --paced-seconds <s> (10),
// --no-floor.
import { fork, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { connectTestBus, createTestContext, messageReceivedEvent, standInPlanLimits } from '@mailroom/testing';
import { callRpc, publishEvent } from '@mailroom/messaging';
import { newId } from '@mailroom/contracts';
import { arg, percentile } from './common.mjs';
import { cpuPerUnit, cpuSnapshot, natsPidsOf, postgresPidsOf } from './cpu.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EVENTS = arg('events', 20_000);
// Paced runs, in events/s (each event is 4 deliveries): the target rate of 1,000 and lighter loads beside it.
const RATES = (process.argv.includes('--rates') ? process.argv[process.argv.indexOf('--rates') + 1] : '250,500,1000').split(',').map(Number);
const PACED_SECONDS = arg('paced-seconds', 10);
const FLOOR = !process.argv.includes('--no-floor');
const RECEIVERS = 4;
const PER_RECEIVER = 4;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const children = [];

function startWebhooks(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/wh-prof'] : []), path.join(root, 'services/webhooks/dist/main.js')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let buf = '';
    child.stdout.on('data', (d) => {
      if (process.env.BENCH_LOG_LEVEL) process.stderr.write(d);
      buf += d;
      if (buf.includes('"msg":"started"')) resolve(child);
      buf = buf.slice(-4096);
    });
    child.on('exit', (code) => reject(new Error(`webhooks exited with ${code}`)));
  });
}

function ask(child, message, key) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (key in m) {
        child.off('message', on);
        resolve(m[key]);
      }
    };
    child.on('message', on);
    child.send(message);
  });
}

async function waitForCount(receivers, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await ask(receivers, 'count', 'count');
    if (count >= expected) return count;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${expected} deliveries arrived in time`);
    await sleep(50);
  }
}

async function latencies(receivers, published) {
  const arrivals = await ask(receivers, 'arrivals', 'arrivals');
  const out = [];
  let duplicates = 0;
  for (const [id, first, n] of arrivals) {
    const t0 = published.get(id);
    if (t0 !== undefined) out.push(first - t0);
    duplicates += n - 1;
  }
  out.sort((a, b) => a - b);
  return { p50: percentile(out, 50), p99: percentile(out, 99), max: out.at(-1), duplicates };
}

const ctx = await createTestContext({
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  MIGRATE_ON_START: 'true',
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
});
try {
  const receivers = fork(path.join(root, 'bench/webhook-receivers.mjs'));
  children.push(receivers);
  const ports = await new Promise((resolve) => receivers.once('message', (m) => resolve(m.ports)));
  const webhooks = await startWebhooks(ctx.env);
  const procs = { webhooks: () => [webhooks.pid], receivers: () => [receivers.pid], postgres: () => postgresPidsOf(ctx.env.DATABASE_URL), 'nats-server': () => natsPidsOf(ctx.env.NATS_URL) };
  // As the tests identity, which seals tenant contexts as the gateway does.
  const bus = await connectTestBus(ctx.env, 'tests', 'bench-webhooks');
  // No orgs here: the made-up tenant's plan is answered by the bench (no limit).
  standInPlanLimits(bus);
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const call = { auth: { kind: 'api_key', key_id: newId('apiKey'), ...tenant, permissions: ['webhooks.manage'] }, requestId: 'bench' };
  for (const port of ports) await callRpc(bus, 'webhooks.endpoint.create', { url: `http://127.0.0.1:${port}/hook` }, call);

  async function publishAll(events, pace) {
    const published = new Map();
    const inflight = new Set();
    const started = now();
    for (const [i, e] of events.entries()) {
      // Paced: publish what is due, then yield a few ms (timers are too coarse for one event each).
      if (pace && started + (i * 1000) / pace > now()) await sleep(Math.max(1, started + (i * 1000) / pace - now()));
      published.set(e.id, now());
      const p = publishEvent(bus, e).finally(() => inflight.delete(p));
      inflight.add(p);
      if (inflight.size >= 256) await Promise.race(inflight);
    }
    await Promise.all(inflight);
    return { published, started };
  }

  const make = (n) => Array.from({ length: n }, () => messageReceivedEvent(tenant));

  // Warm-up: connections, JIT, the database's caches.
  await ask(receivers, 'reset', 'reset');
  await publishAll(make(500));
  await waitForCount(receivers, 500 * RECEIVERS, 60_000);

  // 2. Bare undici loop, same bodies, same receivers, same bound: run just before the burst
  // and again just after it, and the service compared with their mean, because this
  // machine's speed drifts by a third within minutes.
  const burstEvents = make(EVENTS);
  const bodies = burstEvents.map((e) => Buffer.from(JSON.stringify(e)));
  async function bareLoop(sent) {
    const agent = new Agent({ pipelining: 1, keepAliveTimeout: 4_000, allowH2: false });
    await ask(receivers, 'reset', 'reset');
    const cpu0 = cpuSnapshot(procs);
    const start = now();
    await Promise.all(
      ports.flatMap((port) => {
        let next = 0;
        return Array.from({ length: PER_RECEIVER }, async () => {
          while (next < sent.length) {
            const body = sent[next++];
            const res = await request(`http://127.0.0.1:${port}/hook`, { dispatcher: agent, method: 'POST', headers: { 'content-type': 'application/json' }, body });
            await res.body.dump();
          }
        });
      }),
    );
    const ms = now() - start;
    const cpu1 = cpuSnapshot(procs);
    await agent.close();
    return { ms, cpu0, cpu1 };
  }
  // Its own warm-up first (JIT, connections), as the service had.
  await bareLoop(bodies.slice(0, 4_000));
  const bareBefore = await bareLoop(bodies);

  // 1. Burst.
  await ask(receivers, 'reset', 'reset');
  const cpu0 = cpuSnapshot(procs);
  const { published, started } = await publishAll(burstEvents);
  const publishedIn = now() - started;
  await waitForCount(receivers, EVENTS * RECEIVERS, 600_000);
  const burstMs = now() - started;
  const cpu1 = cpuSnapshot(procs);
  const burst = await latencies(receivers, published);

  const bareAfter = await bareLoop(bodies);
  const rateOf = (ms) => (EVENTS * RECEIVERS) / (ms / 1000);
  const bareRate = (rateOf(bareBefore.ms) + rateOf(bareAfter.ms)) / 2;

  // 3. Paced.
  const pacedResults = [];
  for (const rate of RATES) {
    await ask(receivers, 'reset', 'reset');
    const pacedEvents = make(rate * PACED_SECONDS);
    const pacedCpu0 = cpuSnapshot(procs);
    const paced = await publishAll(pacedEvents, rate);
    const publishedRate = pacedEvents.length / ((now() - paced.started) / 1000);
    await waitForCount(receivers, pacedEvents.length * RECEIVERS, 600_000);
    const cpu = cpuPerUnit(pacedCpu0, cpuSnapshot(procs), pacedEvents.length * RECEIVERS, 3);
    pacedResults.push({ rate, events: pacedEvents.length, publishedRate, cpu, ...(await latencies(receivers, paced.published)) });
  }

  // 4. The floors: the webhooks service stopped, the least durable dispatcher there can be
  // (bench/webhook-floor.mjs) takes the same burst between two more bare loops, then the
  // same without PostgreSQL at all. What the first reaches is as close to the bare loop as
  // any service keeping the rows can come here; the second, consuming, signing and
  // posting alone.
  async function runFloor(durable) {
    const child = fork(path.join(root, 'bench/webhook-floor.mjs'), {
      env: { ...process.env, ...ctx.env },
      execArgv: process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=/tmp/wh-prof/floor-${durable ? 'durable' : 'bare'}`] : [],
    });
    children.push(child);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ durable, endpoints: ports.map((port, i) => ({ id: `floor-${i}`, url: `http://127.0.0.1:${port}/hook`, secret: `whsec_${newId('apiKey')}` })) });
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the floor exited with ${code}`)));
    });
    const floorProcs = { floor: () => [child.pid], receivers: () => [receivers.pid], postgres: () => postgresPidsOf(ctx.env.DATABASE_URL), 'nats-server': () => natsPidsOf(ctx.env.NATS_URL) };
    await ask(receivers, 'reset', 'reset');
    await publishAll(make(500));
    await waitForCount(receivers, 500 * RECEIVERS, 60_000);
    const before = await bareLoop(bodies);
    await ask(receivers, 'reset', 'reset');
    const f0 = cpuSnapshot(floorProcs);
    const run = await publishAll(make(EVENTS));
    await waitForCount(receivers, EVENTS * RECEIVERS, 600_000);
    const floorMs = now() - run.started;
    const f1 = cpuSnapshot(floorProcs);
    const after = await bareLoop(bodies);
    child.send('exit');
    await exited;
    return { durable, rate: rateOf(floorMs), before: rateOf(before.ms), after: rateOf(after.ms), cpu: cpuPerUnit(f0, f1, EVENTS * RECEIVERS, 3) };
  }
  const floors = [];
  if (FLOOR) {
    const exited = new Promise((resolve) => webhooks.once('exit', resolve));
    webhooks.kill('SIGTERM');
    await exited;
    floors.push(await runFloor(true), await runFloor(false));
  }

  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const ms = (n) => `${n.toFixed(1)} ms`;
  console.log(`\nbench:webhooks — ${RECEIVERS} receivers on loopback, ${PER_RECEIVER} requests in flight per endpoint; webhooks service in its own process\n`);
  console.log(`burst: ${fmt(EVENTS)} events -> ${fmt(EVENTS * RECEIVERS)} deliveries (published in ${(publishedIn / 1000).toFixed(1)} s)`);
  console.log(`  service path: ${fmt((EVENTS * RECEIVERS) / (burstMs / 1000))} deliveries/s   publish->receipt p50 ${ms(burst.p50)}  p99 ${ms(burst.p99)}  max ${ms(burst.max)}  duplicates ${burst.duplicates}`);
  console.log(`  bare undici:  ${fmt(bareRate)} deliveries/s, the mean of ${fmt(rateOf(bareBefore.ms))} before and ${fmt(rateOf(bareAfter.ms))} after   (same bodies, same receivers, ${PER_RECEIVER} in flight each)`);
  console.log(`  service / bare: ${((rateOf(burstMs) / bareRate) * 100).toFixed(1)}%   (target >= 50%)`);
  console.log(`  CPU ms per delivery, service path: ${cpuPerUnit(cpu0, cpu1, EVENTS * RECEIVERS, 3)}`);
  console.log(`  CPU ms per delivery, bare before:  ${cpuPerUnit(bareBefore.cpu0, bareBefore.cpu1, EVENTS * RECEIVERS, 3)}`);
  console.log(`  CPU ms per delivery, bare after:   ${cpuPerUnit(bareAfter.cpu0, bareAfter.cpu1, EVENTS * RECEIVERS, 3)}`);
  for (const p of pacedResults) {
    console.log(`paced: ${fmt(p.events)} events at ${fmt(p.publishedRate)} events/s (${fmt(p.publishedRate * RECEIVERS)} deliveries/s)`);
    console.log(`  publish->receipt p50 ${ms(p.p50)}  p99 ${ms(p.p99)}  max ${ms(p.max)}  duplicates ${p.duplicates}   (target p99 < 100 ms at 1,000 events/s)`);
    console.log(`  CPU ms per delivery: ${p.cpu}`);
  }
  for (const floor of floors) {
    const bare = (floor.before + floor.after) / 2;
    console.log(
      floor.durable
        ? 'floor: the least durable dispatcher (bench/webhook-floor.mjs: a pending row per delivery, an attempt row per attempt), the same burst, the service stopped'
        : 'floor without PostgreSQL: the same dispatcher writing nothing (consume, sign, POST), the same burst',
    );
    console.log(`  ${fmt(floor.rate)} deliveries/s; bare undici ${fmt(bare)}, the mean of ${fmt(floor.before)} before and ${fmt(floor.after)} after`);
    console.log(`  floor / bare: ${((floor.rate / bare) * 100).toFixed(1)}%   service / floor: ${((rateOf(burstMs) / floor.rate) * 100).toFixed(1)}%`);
    console.log(`  CPU ms per delivery: ${floor.cpu}`);
  }
  await bus.drain();
} finally {
  for (const c of children) c.kill('SIGTERM');
  await sleep(1500);
  await ctx.cleanup();
}
