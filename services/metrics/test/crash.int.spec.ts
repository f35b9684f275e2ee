/**
 * The metrics service as its own process (node services/metrics/dist/main.js, built by
 * `npm test`): killed with SIGKILL in the middle of a burst of 5,000 events and started
 * again, every event is counted exactly once, per environment and per custom domain; a
 * replay of the stream into emptied tables gives the same answers. The inboxes' domains are
 * what metrics learned before the burst (this test runs no mailbox nor domains to ask: the
 * all-in-one's metrics.int.spec.ts asks them). Then two instances share a burst, one is killed
 * with SIGKILL in its middle, and the survivor alone counts the rest, each event once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { callRpc, publishEvent, type Bus } from '@mailroom/messaging';
import { KEY_SCOPES, newId, type AuthContext, type EventEnvelope } from '@mailroom/contracts';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { createLogger } from '@mailroom/platform';
import { connectTestBus, createTestContext, waitFor, type TestContext } from '@mailroom/testing';
import { replayRollups } from '../src/replay';
import { burstEvent, expectedTotals } from './events';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');
const BURST = 5_000;

let ctx: TestContext;
let bus: Bus;
let db: Kysely<unknown>;
const children = new Set<ChildProcess>();

function startMetrics(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    // Small batches: the burst takes a while, so the kill lands in its middle.
    env: { ...process.env, ...ctx.env, LOG_LEVEL: 'info', MIGRATE_ON_START: 'true', HEALTH_PORT: '0', METRICS_CONSUMER_CONCURRENCY: '8' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('"msg":"started"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`metrics exited with ${code} before starting`)));
  });
}

function exited(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', resolve);
  });
}

const counted = async () => (await sql<{ n: number }>`select count(*)::int as n from metrics.processed_events`.execute(db)).rows[0]!.n;

beforeAll(async () => {
  ctx = await createTestContext();
  bus = await connectTestBus(ctx.env);
  db = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: 'public', max: 2 });
});

afterAll(async () => {
  await Promise.all([...children].map((c) => (c.kill('SIGKILL'), exited(c))));
  await db?.destroy();
  await bus?.drain();
  await ctx?.cleanup();
});

it('kill -9 in the middle of a burst of 5,000 events, restart: the totals equal the events published, and a replay gives the same answers', async () => {
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), ...tenant, permissions: [...KEY_SCOPES.full] };
  const call = () => ({ auth, requestId: newId('request') });
  // 6 inboxes for 7 kinds of event in turn: every inbox gets every kind.
  const inboxes = Array.from({ length: 6 }, () => newId('inbox'));
  const now = Date.now();
  const events: EventEnvelope[] = Array.from({ length: BURST }, (_, i) => burstEvent(tenant, inboxes, i, now));

  // 3 inboxes on one domain, 2 on another, 1 on none (MAIL_DOMAIN).
  const domainOf = (i: number) => (i < 3 ? domA : i < 5 ? domB : null);
  const domA = newId('domain');
  const domB = newId('domain');

  let child = await startMetrics();
  await sql`insert into metrics.inbox_domains (org_id, env_id, inbox_id, domain_id) select ${tenant.org_id}, ${tenant.env_id}, i, d from unnest(${inboxes}::text[], ${inboxes.map((_, i) => domainOf(i))}::text[]) as t(i, d)`.execute(db);
  const publishing = (async () => {
    for (let i = 0; i < events.length; i += 250) await Promise.all(events.slice(i, i + 250).map((e) => publishEvent(bus, e)));
  })();
  await waitFor(async () => (await counted()) >= 500, { timeoutMs: 30_000, intervalMs: 5, what: '500 events counted' });
  child.kill('SIGKILL');
  await exited(child);
  const atKill = await counted();
  await publishing;
  expect(atKill).toBeLessThan(BURST);
  child = await startMetrics();
  await waitFor(async () => (await counted()) === BURST, { timeoutMs: 60_000, what: 'every event counted' });

  const query = { from: new Date(now - 6 * 3_600_000).toISOString(), to: new Date(now).toISOString() };
  const summary = await callRpc(bus, 'metrics.summary.get', query, call());
  expect(summary.totals).toEqual(expectedTotals(events));
  const activity = await callRpc(bus, 'metrics.activity.get', query, call());
  const deliverability = await callRpc(bus, 'metrics.deliverability.get', query, call());
  expect(activity.buckets.reduce((n, b) => n + b.sent, 0)).toBe(summary.totals.sent);
  expect(deliverability.latency_ms.count).toBe(summary.totals.delivered);

  // Usage over whole hours around the burst, as orgs asks (service-only).
  const hour = 3_600_000;
  const period = { org_id: tenant.org_id, start: new Date(Math.floor(now / hour) * hour - 6 * hour).toISOString(), end: new Date(Math.floor(now / hour) * hour + hour).toISOString() };
  const usage = await callRpc(bus, 'metrics.usage.count', period, { auth: { kind: 'service', service: 'orgs' }, requestId: newId('request') });
  expect(usage).toEqual({ messages_sent: summary.totals.sent, messages_received: summary.totals.received });

  // Per domain: exactly the events of its inboxes.
  const inboxIds: readonly string[] = inboxes;
  const onDomain = (d: string) => events.filter((e) => 'inbox_id' in e.data && domainOf(inboxIds.indexOf(e.data.inbox_id)) === d);
  const perDomain = async () =>
    Promise.all(
      [domA, domB].map(async (domain_id) => ({
        summary: await callRpc(bus, 'metrics.summary.get', { ...query, domain_id }, call()),
        activity: await callRpc(bus, 'metrics.activity.get', { ...query, domain_id }, call()),
        deliverability: await callRpc(bus, 'metrics.deliverability.get', { ...query, domain_id }, call()),
      })),
    );
  const domains = await perDomain();
  expect(domains.map((d) => d.summary.totals)).toEqual([expectedTotals(onDomain(domA)), expectedTotals(onDomain(domB))]);
  expect(domains[0]!.summary.totals.sent + domains[1]!.summary.totals.sent).toBeLessThan(summary.totals.sent);
  // A domain's warnings name its own inboxes only.
  for (const [i, d] of domains.entries()) {
    const named = d.deliverability.warnings.flatMap((w) => w.top_inboxes.map((t) => t.inbox_id));
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((id) => domainOf(inboxIds.indexOf(id)) === [domA, domB][i])).toBe(true);
  }

  // Replayed while the service runs: the same answers, per domain too.
  const replay = await replayRollups(ctx.env, createLogger({ service: 'test', level: 'silent' }));
  expect(replay).toMatchObject({ read: BURST, skipped: 0 });
  expect(await callRpc(bus, 'metrics.summary.get', query, call())).toEqual(summary);
  expect(await callRpc(bus, 'metrics.activity.get', query, call())).toEqual(activity);
  expect(await callRpc(bus, 'metrics.deliverability.get', query, call())).toEqual(deliverability);
  expect(await perDomain()).toEqual(domains);
  // Two starts of the service, 5,000 publishes and a replay on a shared 2-core machine: a bound, not a measure.
}, 180_000);

it('two instances share the burst; kill -9 one in its middle: the other counts the rest, and the totals equal the events published', async () => {
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), ...tenant, permissions: [...KEY_SCOPES.full] };
  const inboxes = Array.from({ length: 5 }, () => newId('inbox'));
  const now = Date.now();
  const events: EventEnvelope[] = Array.from({ length: BURST }, (_, i) => burstEvent(tenant, inboxes, i, now));
  const ids = events.map((e) => e.id);
  const countedHere = async () => (await sql<{ n: number }>`select count(*)::int as n from metrics.processed_events where event_id = any(${ids}::text[])`.execute(db)).rows[0]!.n;

  // Only these two instances from here on (the first test leaves one running).
  await Promise.all([...children].map((c) => (c.kill('SIGTERM'), exited(c))));
  const [a, b] = [await startMetrics(), await startMetrics()];
  // On no custom domain (this test runs no mailbox nor domains to ask).
  await sql`insert into metrics.inbox_domains (org_id, env_id, inbox_id, domain_id) select ${tenant.org_id}, ${tenant.env_id}, i, null from unnest(${inboxes}::text[]) as t(i)`.execute(db);
  const publishing = (async () => {
    for (let i = 0; i < events.length; i += 250) await Promise.all(events.slice(i, i + 250).map((e) => publishEvent(bus, e)));
  })();
  await waitFor(async () => (await countedHere()) >= 500, { timeoutMs: 30_000, intervalMs: 5, what: '500 events counted' });
  a.kill('SIGKILL');
  await exited(a);
  expect(await countedHere()).toBeLessThan(BURST);
  await publishing;
  // The survivor takes over the killed one's unacknowledged messages once their ack wait ends.
  await waitFor(async () => (await countedHere()) === BURST, { timeoutMs: 90_000, what: 'every event counted by the survivor' });
  expect(b.exitCode).toBeNull();

  const query = { from: new Date(now - 6 * 3_600_000).toISOString(), to: new Date(now).toISOString() };
  const summary = await callRpc(bus, 'metrics.summary.get', query, { auth, requestId: newId('request') });
  expect(summary.totals).toEqual(expectedTotals(events));
}, 180_000);
