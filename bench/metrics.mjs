// npm run bench:metrics — the metrics service (its own process, as in production) counting a
// backlog of events from the EVENTS stream into its rollups, against a bare loop that reads
// the same stream with the same library and acks without writing, in the same run; then the
// latency of GET /api/v1/metrics/activity over 31 days with 1,000 inboxes of data, through the
// gateway (the all-in-one process). Measured:
//   1. bare: a durable consumer (same concurrency, same parse and seal checks) acking every
//      event, before and after the service; events/s, and the mean of the two;
//   2. metrics: events/s from its start until every event is counted (processed_events); it
//      learns the domain of each of the 1,000 inboxes on first sight, asking mailbox and
//      domains (each its own process, started before it) once per inbox;
//   3. activity: --requests sequential GETs of 31 days, all inboxes (1,000 inboxes x 744 hours
//      of rows seeded with SQL, and the environment's row of all inboxes per hour, as the
//      consumer keeps it), then the same for one inbox: p50/p99.
// Options: --events <n> (50000), --requests <n> (200), --concurrency <n> (256).
import { createDb, sql } from '@mailroom/db';
import { publishEvent, runConsumer } from '@mailroom/messaging';
import { newId } from '@mailroom/contracts';
import { connectTestBus, createTestContext, signUpTenant } from '@mailroom/testing';
import { arg, percentile, startProcess } from './common.mjs';

const EVENTS = arg('events', 50_000);
const REQUESTS = arg('requests', 200);
const CONCURRENCY = arg('concurrency', 256);
const INBOXES = 1_000;
const HOURS = 31 * 24;
const HOUR = 3_600_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];

/** Event i: the kinds in turn, over 1,000 inboxes and the last 31 days. */
function event(tenant, inboxes, i, now) {
  const at = new Date(now - (i % HOURS) * HOUR);
  const timestamp = at.toISOString();
  const base = { id: newId('event', at.getTime()), timestamp, org_id: tenant.org_id, env_id: tenant.env_id };
  const msg = { message_id: newId('message'), thread_id: newId('thread'), inbox_id: inboxes[i % inboxes.length] };
  switch (i % 6) {
    case 0:
      return { ...base, type: 'message.received', data: { ...msg, from_address: 'a@sender.test', to_addresses: ['b@agents.test'], subject: 's', extracted_text: 't', has_attachments: false, received_at: timestamp } };
    case 1:
    case 2:
      return { ...base, type: 'message.sent', data: { ...msg, from_address: 'b@agents.test', to_addresses: ['a@sender.test'], subject: 's', provider_message_id: 'p', sent_at: timestamp } };
    case 3:
    case 4:
      return { ...base, type: 'message.delivered', data: { ...msg, to_addresses: ['a@sender.test'], delivered_at: timestamp, processing_time_ms: (i * 37) % 20_000 } };
    default:
      return { ...base, type: 'message.bounced', data: { ...msg, bounce_type: i % 4 ? 'Transient' : 'Permanent', bounce_sub_type: 'General', bounced_recipients: [], bounced_at: timestamp } };
  }
}

async function bareLoop(bus, durable) {
  let acked = 0;
  let done;
  const all = new Promise((r) => (done = r));
  const started = performance.now();
  const consumer = await runConsumer(bus, {
    subject: 'events.>',
    durable,
    filterSubject: 'events.>',
    concurrency: CONCURRENCY,
    handler: async () => {
      if (++acked === EVENTS) done();
      return 'ack';
    },
  });
  await all;
  const seconds = (performance.now() - started) / 1000;
  await consumer.stop();
  return EVENTS / seconds;
}

async function timeRequests(url, key) {
  const times = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1) };
}

const ctx = await createTestContext({ LOG_LEVEL: 'info', MIGRATE_ON_START: 'true', METRICS_CONSUMER_CONCURRENCY: String(CONCURRENCY) });
const db = createDb({ url: ctx.env.DATABASE_URL, schema: 'metrics', max: 2 });
try {
  const bus = await connectTestBus(ctx.env, 'tests', 'bench-metrics');
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const inboxes = Array.from({ length: INBOXES }, () => newId('inbox'));
  const now = Date.now();
  const t0 = performance.now();
  const inflight = new Set();
  for (let i = 0; i < EVENTS; i++) {
    const p = publishEvent(bus, event(tenant, inboxes, i, now)).finally(() => inflight.delete(p));
    inflight.add(p);
    if (inflight.size >= 256) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  console.log(`published ${EVENTS} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const bareBefore = await bareLoop(bus, 'test--bench-bare-1');
  console.log(`bare read-and-ack (before): ${bareBefore.toFixed(0)} events/s`);

  // The owners metrics asks an inbox's domain of (the made-up inboxes are on none: 404, kept as none).
  const owners = await Promise.all(['mailbox', 'domains'].map(async (name) => (await startProcess(name, ctx.env, { children })).child));
  const { child: metrics } = await startProcess('metrics', ctx.env, { children });
  const started = performance.now();
  for (;;) {
    const { rows } = await sql`select count(*)::int as n from processed_events`.execute(db);
    if (rows[0].n >= EVENTS) break;
    await sleep(50);
  }
  const counted = EVENTS / ((performance.now() - started) / 1000);
  console.log(`metrics counted: ${counted.toFixed(0)} events/s`);
  for (const c of [metrics, ...owners]) {
    c.kill('SIGTERM');
    await new Promise((r) => c.once('exit', r));
  }

  const bareAfter = await bareLoop(bus, 'test--bench-bare-2');
  console.log(`bare read-and-ack (after): ${bareAfter.toFixed(0)} events/s`);
  const bare = (bareBefore + bareAfter) / 2;
  console.log(`metrics / bare: ${((counted / bare) * 100).toFixed(0)}% (bare mean ${bare.toFixed(0)} events/s)`);
  await bus.drain();

  // The activity route over a tenant with every hour of 31 days for 1,000 inboxes.
  const { endpoints } = await startProcess('all-in-one', ctx.env, { children, ready: (e) => Boolean(e.http) });
  const owner = await signUpTenant(endpoints.http);
  const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - (HOURS - 1) * HOUR);
  const seeded = performance.now();
  // 50 inboxes a statement: each stays well inside the database's statement timeout on a loaded machine.
  for (let first = 1; first <= INBOXES; first += 50) {
    await sql`
      insert into hourly_counts (org_id, env_id, hour, inbox_id, received, sent, delivered, bounced_hard, complained)
      select ${owner.org_id}, ${owner.env_id}, ${from}::timestamptz + h * interval '1 hour', 'inb_' || lpad(i::text, 26, '0'), 3, 5, 4, (h + i) % 2, (h * i) % 3
      from generate_series(0, ${HOURS - 1}::int) h, generate_series(${first}::int, ${Math.min(INBOXES, first + 49)}::int) i`.execute(db);
  }
  // The environment's row of all inboxes per hour, as the consumer keeps it.
  await sql`
    insert into hourly_counts (org_id, env_id, hour, inbox_id, received, sent, delivered, bounced_hard, complained)
    select org_id, env_id, hour, '*', sum(received), sum(sent), sum(delivered), sum(bounced_hard), sum(complained)
    from hourly_counts where org_id = ${owner.org_id} and env_id = ${owner.env_id} group by org_id, env_id, hour`.execute(db);
  await sql`analyze hourly_counts`.execute(db);
  console.log(`seeded ${INBOXES * HOURS} rollup rows in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
  const range = `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(new Date(from.getTime() + HOURS * HOUR).toISOString())}`;
  const all = await timeRequests(`${endpoints.http}/api/v1/metrics/activity?${range}`, owner.key);
  console.log(`GET /api/v1/metrics/activity, 31 days, all 1,000 inboxes: p50 ${all.p50.toFixed(1)} ms, p99 ${all.p99.toFixed(1)} ms, max ${all.max.toFixed(1)} ms (${REQUESTS} requests, one at a time)`);
  const one = await timeRequests(`${endpoints.http}/api/v1/metrics/activity?${range}&inbox_id=inb_${'1'.padStart(26, '0')}`, owner.key);
  console.log(`GET /api/v1/metrics/activity, 31 days, one inbox: p50 ${one.p50.toFixed(1)} ms, p99 ${one.p99.toFixed(1)} ms, max ${one.max.toFixed(1)} ms`);
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await db.destroy();
  await ctx.cleanup();
}
