/**
 * The webhooks service as its own process (node services/webhooks/dist/main.js, built by
 * `npm test`): killed with SIGKILL in the middle of deliveries and started again, every
 * event is delivered at least once and no attempt row is written twice; stopped with
 * SIGTERM, the attempt in flight finishes and is recorded, and a scheduled retry survives
 * the restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { callRpc, publishEvent, type Bus } from '@mailroom/messaging';
import { KEY_SCOPES, newId, type AuthContext } from '@mailroom/contracts';
import { connectTestBus, createTestContext, messageReceivedEvent, standInPlanLimits, waitFor, WebhookReceiver, type TestContext } from '@mailroom/testing';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');

let ctx: TestContext;
let bus: Bus;
let db: Kysely<unknown>;
const children = new Set<ChildProcess>();
/** What each instance wrote to stdout (its log lines). */
const output = new Map<ChildProcess, string>();
const receivers: WebhookReceiver[] = [];

/** `env`: settings of this instance over the ones below. */
function startWebhooks(env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      ...ctx.env,
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'true',
      HEALTH_PORT: '0',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      // A killed instance's deliveries are taken over once its lease runs out: 2 s here.
      WEBHOOK_LEASE_SECONDS: '2',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_RETRY_SCHEDULE: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      output.set(child, buf);
      if (buf.includes('"msg":"started"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`webhooks exited with ${code} before starting`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

function tenantCall() {
  const tenant = { org_id: newId('organization'), env_id: newId('environment') };
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), ...tenant, permissions: [...KEY_SCOPES.full] };
  return { tenant, call: { auth, requestId: newId('request') } };
}

beforeAll(async () => {
  ctx = await createTestContext();
  bus = await connectTestBus(ctx.env);
  // No orgs here: the made-up tenants' plans are answered by the test (no limit).
  standInPlanLimits(bus);
  db = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: 'webhooks', max: 2 });
});

/** Undone after each test, passed or failed. */
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  // A test that failed half-way must not leave an instance consuming the next test's events.
  await Promise.all([...children].map((c) => (c.kill('SIGKILL'), exited(c))));
  for (const undo of cleanups.splice(0)) await undo();
});

afterAll(async () => {
  await db?.destroy();
  await bus?.drain();
  await Promise.all(receivers.map((r) => r.close()));
  await ctx?.cleanup();
});

it('kill -9 during delivery, then restart: every event delivered at least once, no duplicate attempt rows', async () => {
  let child = await startWebhooks();
  const { tenant, call } = tenantCall();
  // 4 requests in flight of 100 ms each: the 150 events take seconds, so the kill lands in the middle.
  const r = await WebhookReceiver.start({ reply: () => ({ status: 200, delayMs: 100 }) });
  receivers.push(r);
  const endpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: r.url() }, call);
  const events = Array.from({ length: 150 }, () => messageReceivedEvent(tenant));
  for (const e of events) await publishEvent(bus, e);

  // Every event fanned out (acked on the bus), and deliveries under way: the kill hits the deliveries.
  await waitFor(async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where id = any(${events.map((e) => e.id)}::text[]) and fanned_out`.execute(db);
    return rows[0]!.n === events.length;
  }, { what: 'every event fanned out' });
  // Killed while the receiver holds requests: attempts sent and, by this instance, never recorded.
  await waitFor(() => r.received.length >= 8 && r.answering > 0, { what: 'deliveries under way' });
  const heldAtKill = r.answering;
  child.kill('SIGKILL');
  await exited(child);
  expect(heldAtKill).toBeGreaterThan(0);
  const atKill = new Set(r.received.map((d) => d.body.id)).size;
  expect(atKill).toBeLessThan(events.length);
  child = await startWebhooks();

  await waitFor(() => events.every((e) => r.of(e.id).length >= 1), { timeoutMs: 30_000, what: 'every event received' });
  const attempts = await waitFor(async () => {
    const { rows } = await sql<{ event_id: string; n: number; delivered: number }>`
      select event_id, count(*)::int as n, count(*) filter (where status = 'delivered')::int as delivered
      from attempts where endpoint_id = ${endpoint.id} group by event_id`.execute(db);
    return rows.length === events.length && rows.every((row) => row.delivered === 1) && rows;
  }, { timeoutMs: 30_000, what: 'every delivery recorded' });
  // One attempt row per event: an attempt sent before the kill and never recorded is sent again as the same attempt.
  expect(attempts.every((a) => a.n === 1)).toBe(true);
  // And such attempts were sent again: each request held at the kill came twice, at least.
  expect(events.filter((e) => r.of(e.id).length >= 2).length).toBeGreaterThanOrEqual(heldAtKill);
  // Nothing left to attempt: every delivery finished and left the queue, none is stuck under the dead instance's lease.
  const { rows: jobs } = await sql<{ state: string; n: number }>`select state, count(*)::int as n from jobs where endpoint_id = ${endpoint.id} group by state`.execute(db);
  expect(jobs).toEqual([]);
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
}, 60_000);

it('SIGTERM lets the attempt in flight finish and keeps the scheduled retry', async () => {
  let child = await startWebhooks();
  const { tenant, call } = tenantCall();
  const slow = await WebhookReceiver.start({ reply: () => ({ status: 200, delayMs: 1_500 }) });
  const failing = await WebhookReceiver.start({ reply: () => ({ status: 500 }) });
  receivers.push(slow, failing);
  const slowEndpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: slow.url() }, call);
  const failingEndpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: failing.url() }, call);
  const event = messageReceivedEvent(tenant);
  await publishEvent(bus, event);

  await waitFor(() => slow.of(event.id).length === 1 && failing.of(event.id).length === 1, { what: 'both attempts started' });
  const [failed] = (await waitFor(async () => (await callRpc(bus, 'webhooks.delivery.list', { id: failingEndpoint.id }, call)).data.length === 1 && callRpc(bus, 'webhooks.delivery.list', { id: failingEndpoint.id }, call))).data;
  expect(failed).toMatchObject({ status: 'failed', http_status: 500, next_attempt_at: expect.any(String) });
  // WEBHOOK_RETRY_SCHEDULE=2: the retry 2 s +-20% after the attempt started, give or take the attempt
  // itself and a clock tick (the default schedule's first retry is 5 s).
  const retryGap = Date.parse(failed!.next_attempt_at!) - Date.parse(failed!.created_at);
  expect(retryGap).toBeGreaterThanOrEqual(1_600);
  // Under the default schedule's first retry (5 s, 4 s at the least): the override is what the service uses.
  expect(retryGap).toBeLessThan(4_000);
  // The slow receiver still holds its request: the SIGTERM lands in the middle of the attempt.
  expect(slow.answering).toBeGreaterThan(0);
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
  const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from attempts where endpoint_id = ${slowEndpoint.id} group by status`.execute(db);
  expect(rows).toEqual([{ status: 'delivered', n: 1 }]);
  const { rows: retry } = await sql<{ state: string; next_attempt_at: Date }>`select state, next_attempt_at from jobs where endpoint_id = ${failingEndpoint.id}`.execute(db);
  expect(retry).toEqual([{ state: 'pending', next_attempt_at: expect.any(Date) }]);

  failing.reply = () => ({ status: 200 });
  child = await startWebhooks();
  await waitFor(() => failing.of(event.id).length === 2, { timeoutMs: 15_000, what: 'the retry after the restart' });
  const after = await waitFor(async () => {
    const list = await callRpc(bus, 'webhooks.delivery.list', { id: failingEndpoint.id }, call);
    return list.data.length === 2 && list.data;
  });
  expect(after[0]).toMatchObject({ status: 'delivered', attempt: 2, trigger: 'scheduled' });
  expect(slow.of(event.id)).toHaveLength(1);
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
}, 60_000);

it('two instances share the work: every event delivered once, at most 4 requests in flight to an endpoint from each', async () => {
  const first = await startWebhooks();
  const second = await startWebhooks();
  const { tenant, call } = tenantCall();
  let peak = 0;
  const r: WebhookReceiver = await WebhookReceiver.start({
    reply: () => {
      peak = Math.max(peak, r.answering);
      return { status: 200, delayMs: 100 };
    },
  });
  receivers.push(r);
  await callRpc(bus, 'webhooks.endpoint.create', { url: r.url() }, call);
  const events = Array.from({ length: 60 }, () => messageReceivedEvent(tenant));
  await Promise.all(events.map((e) => publishEvent(bus, e)));
  await waitFor(() => events.every((e) => r.of(e.id).length >= 1), { timeoutMs: 30_000, what: 'every event received' });
  // The bound is per instance (issue 30): two instances, 8 at most.
  expect(peak).toBeLessThanOrEqual(8);
  // Nothing failed, so nothing was sent twice: the claims and the fan-out give each delivery to one instance.
  for (const e of events) expect(r.of(e.id)).toHaveLength(1);
  for (const child of [first, second]) child.kill('SIGTERM');
  expect(await Promise.all([exited(first), exited(second)])).toEqual([0, 0]);
}, 60_000);

it('logs the non-public ranges it may reach at start', async () => {
  const child = await startWebhooks({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32,10.1.0.0/16' });
  // Complete lines only: the output so far can end in the middle of one.
  const lines = (output.get(child) ?? '').split('\n').slice(0, -1).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as unknown);
  expect(lines).toContainEqual(expect.objectContaining({ allowed_cidrs: ['127.0.0.1/32', '10.1.0.0/16'], msg: expect.stringContaining('WEBHOOK_ALLOWED_CIDRS') }));
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
});

it('SIGTERM with an attempt past WEBHOOK_SHUTDOWN_GRACE_MS: exits anyway, records nothing for it, and sends it again after a restart', async () => {
  let child = await startWebhooks({ WEBHOOK_SHUTDOWN_GRACE_MS: '300' });
  const { tenant, call } = tenantCall();
  const hanging = await WebhookReceiver.start({ reply: () => ({ status: 200, hang: true }) });
  receivers.push(hanging);
  const endpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: hanging.url() }, call);
  const event = messageReceivedEvent(tenant);
  await publishEvent(bus, event);
  await waitFor(() => hanging.of(event.id).length === 1, { what: 'the attempt at the receiver' });

  child.kill('SIGTERM');
  // The receiver never answers: only the grace period ends the attempt.
  await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 20_000, what: 'the process to exit with the attempt still hanging' });
  expect(child.exitCode).toBe(0);
  expect(hanging.answering).toBe(1);
  expect(output.get(child)).toContain('attempts still running at the end of the grace period');
  const { rows: recorded } = await sql<{ n: number }>`select count(*)::int as n from attempts where endpoint_id = ${endpoint.id}`.execute(db);
  expect(recorded).toEqual([{ n: 0 }]);
  // Handed back as due, to whichever instance comes next.
  const { rows: jobs } = await sql<{ state: string; lock_owner: string | null }>`select state, lock_owner from jobs where endpoint_id = ${endpoint.id}`.execute(db);
  expect(jobs).toEqual([{ state: 'pending', lock_owner: null }]);

  hanging.reply = () => ({ status: 200 });
  child = await startWebhooks();
  await waitFor(() => hanging.of(event.id).length === 2, { timeoutMs: 15_000, what: 'the attempt sent again after the restart' });
  const records = await waitFor(async () => {
    const list = await callRpc(bus, 'webhooks.delivery.list', { id: endpoint.id }, call);
    return list.data.length > 0 && list.data;
  });
  // The cut attempt left no row: the one sent again is attempt 1.
  expect(records).toEqual([expect.objectContaining({ status: 'delivered', attempt: 1 })]);
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
}, 60_000);

it('a delivery leased to the live instance that it does not hold (an answer lost) is handed back and sent', async () => {
  // Retries an hour apart: the delivery waits in the queue for the test to lose it.
  const child = await startWebhooks({ WEBHOOK_RETRY_SCHEDULE: '3600' });
  const { tenant, call } = tenantCall();
  const r = await WebhookReceiver.start({ reply: (d) => ({ status: d.n === 1 ? 500 : 200 }) });
  receivers.push(r);
  const endpoint = await callRpc(bus, 'webhooks.endpoint.create', { url: r.url() }, call);
  const event = messageReceivedEvent(tenant);
  await publishEvent(bus, event);
  await waitFor(async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from jobs where endpoint_id = ${endpoint.id} and state = 'pending'`.execute(db);
    return rows[0]!.n === 1;
  }, { what: 'the retry waiting in the queue' });

  // As a claim whose commit went through and whose answer never came back leaves it: leased
  // to the instance, which holds nothing of it; due now. The reaper leaves a live instance's
  // deliveries alone, and claims take only pending ones.
  const { rows: live } = await sql<{ owner: string }>`select owner from workers`.execute(db);
  expect(live).toHaveLength(1);
  await sql`update jobs set state = 'in_flight', lock_owner = ${live[0]!.owner}, next_attempt_at = now(), updated_at = now() - interval '1 hour'
            where endpoint_id = ${endpoint.id}`.execute(db);

  await waitFor(() => r.of(event.id).length === 2, { timeoutMs: 20_000, what: 'the retry sent after all' });
  const attempts = await waitFor(async () => {
    const { rows } = await sql<{ attempt: number; status: string }>`select attempt, status from attempts where endpoint_id = ${endpoint.id} order by id`.execute(db);
    return rows.length === 2 && rows;
  }, { what: 'both attempts recorded' });
  expect(attempts).toEqual([{ attempt: 1, status: 'failed' }, { attempt: 2, status: 'delivered' }]);
  expect(output.get(child)).toContain('does not hold');
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
}, 40_000);
