/**
 * The delivery queue against the real server: an event is fanned out once however often it
 * arrives, claims are per endpoint (a long backlog of one does not hold up another), a
 * finished delivery leaves the queue, a dead worker's deliveries are taken over, and a
 * delivery whose endpoint was deleted is dropped, never attempted.
 */
import path from 'node:path';
import { sql, type Kysely } from '@mailroom/db';
import { monotonicIds, newId } from '@mailroom/contracts';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { DeliveryRepository, type ClaimedJob, type FinishedAttempt, type StoredEvent } from '../src/repo/delivery.repository';
import type { Tenant } from '@mailroom/contracts';
import type { WebhooksDb } from '../src/repo/tables';
import { insertEndpoint, tenant } from './fixtures';

let ctx: TestContext;
let db: Kysely<WebhooksDb>;
let repo: DeliveryRepository;
const t0 = new Date('2026-11-22T10:00:00Z');
const recording = { threshold: 50, reason: 'test reason', now: t0 };
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<WebhooksDb>(ctx, { schema: 'webhooks', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new DeliveryRepository(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const endpoint = (t: Tenant) => insertEndpoint(db, t, t0);

function event(t: { org_id: string; env_id: string }): StoredEvent {
  const id = newId('event');
  return { id, ...t, type: 'message.received', body: Buffer.from(JSON.stringify({ id })), occurred_at: t0, inbox_id: null };
}

const queued = async (endpointId: string) =>
  (await sql<{ event_id: string; state: string; lock_owner: string | null }>`select event_id, state, lock_owner from jobs where endpoint_id = ${endpointId} order by id`.execute(db)).rows;

// As a dispatcher makes them: in increasing order, also within one millisecond.
const attemptId = monotonicIds('delivery');

function finished(job: ClaimedJob, ok: boolean, retryAt: Date | null): FinishedAttempt {
  return { attemptId: attemptId(), job, attempt: job.attempts + 1, trigger: 'scheduled', ok, httpStatus: ok ? 200 : 500, error: ok ? null : 'non_2xx_status', responseBody: null, durationMs: 3, at: t0, retryAt };
}

describe('fan-out', () => {
  it('queues an event once per endpoint, however often it arrives', async () => {
    const t = tenant();
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const e = event(t);
    expect((await repo.fanOut([e, e], { maxAttempts: 10, now: t0 })).created).toBe(2);
    expect((await repo.fanOut([e], { maxAttempts: 10, now: t0 })).created).toBe(0);
    expect(await queued(a)).toEqual([{ event_id: e.id, state: 'pending', lock_owner: null }]);
    expect(await queued(b)).toHaveLength(1);
    // Still once after the delivery finished and left the queue.
    const jobs = await repo.claim({ owner: 'w1', now: t0, endpoints: [{ id: a, room: 10 }] });
    await repo.record('w1', [finished(jobs[0]!, true, null)], recording);
    expect(await queued(a)).toEqual([]);
    expect((await repo.fanOut([e], { maxAttempts: 10, now: t0 })).created).toBe(0);
    expect(await queued(a)).toEqual([]);
  });

  it('stores the exact bytes of each event of a batch, to be sent again on a retry', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const bodies = ['{"id":"x"}', JSON.stringify({ text: 'héllo wörld ✓ 🙂', quote: '"\\' }), 'x'.repeat(70_000), '{}'];
    const events = bodies.map((text) => ({ ...event(t), body: Buffer.from(text, 'utf8') }));
    expect((await repo.fanOut(events, { maxAttempts: 10, now: t0 })).created).toBe(4);
    const jobs = await repo.claim({ owner: 'w-bytes', now: t0, endpoints: [{ id: a, room: 10 }] });
    const byEvent = new Map(jobs.map((j) => [j.event_id, j.body]));
    for (const e of events) expect(byEvent.get(e.id)?.equals(e.body)).toBe(true);
  });

  it('creates deliveries leased to the worker that asks, with what it needs to send them', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const e = event(t);
    const { claimed } = await repo.fanOut([e], { maxAttempts: 10, now: t0, lease: { owner: 'w-lease', pendingFor: [] } });
    expect(claimed).toEqual([expect.objectContaining({ endpoint_id: a, event_id: e.id, attempts: 0, max_attempts: 10, url: `https://${a}.example.com/hook`, body: e.body })]);
    expect(await queued(a)).toEqual([{ event_id: e.id, state: 'in_flight', lock_owner: 'w-lease' }]);
  });

  it('creates pending, and does not return, the deliveries to endpoints the worker has enough of', async () => {
    const t = tenant();
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const e = event(t);
    const { created, claimed, pendingEndpoints } = await repo.fanOut([e], { maxAttempts: 10, now: t0, lease: { owner: 'w-lease', pendingFor: [b] } });
    expect(created).toBe(2);
    expect(claimed.map((j) => j.endpoint_id)).toEqual([a]);
    expect(pendingEndpoints).toEqual([b]);
    expect(await queued(a)).toEqual([{ event_id: e.id, state: 'in_flight', lock_owner: 'w-lease' }]);
    expect(await queued(b)).toEqual([{ event_id: e.id, state: 'pending', lock_owner: null }]);
    const later = await repo.claim({ owner: 'w2', now: t0, endpoints: [{ id: b, room: 10 }] });
    expect(later.map((j) => j.event_id)).toEqual([e.id]);
    // A long list (matched through a hash) means the same.
    const many = [...Array.from({ length: 100 }, () => newId('webhookEndpoint')), b];
    const next = event(t);
    const again = await repo.fanOut([next], { maxAttempts: 10, now: t0, lease: { owner: 'w-lease', pendingFor: many } });
    expect([again.claimed.map((j) => j.endpoint_id), again.pendingEndpoints]).toEqual([[a], [b]]);
  });

  it("keeps each event's trace context for all its attempts, leased or claimed later; a fan-out after recovery takes its own", async () => {
    const t = tenant();
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const tp = (n: number) => `00-${String(n).repeat(32)}-${'b'.repeat(16)}-01`;
    const [traced, untraced] = [{ ...event(t), traceparent: tp(1) }, event(t)];
    const { claimed } = await repo.fanOut([traced, untraced], { maxAttempts: 10, now: t0, lease: { owner: 'w-trace', pendingFor: [b] } });
    expect(Object.fromEntries(claimed.map((j) => [j.event_id, j.traceparent]))).toEqual({ [traced.id]: tp(1), [untraced.id]: null });
    // Claimed from the queue (a retry, another instance): the same context, read with the event.
    const later = await repo.claim({ owner: 'w-trace-2', now: t0, endpoints: [{ id: b, room: 10 }] });
    expect(Object.fromEntries(later.map((j) => [j.event_id, j.traceparent]))).toEqual({ [traced.id]: tp(1), [untraced.id]: null });
    // Stored by recovery in the trace it was published in, then fanned out: the handling's trace from then on.
    const recovered = { ...event(t), traceparent: tp(2) };
    await repo.queueRecovery(a, [recovered], 10, t0);
    await repo.fanOut([{ ...recovered, traceparent: tp(3) }], { maxAttempts: 10, now: t0 });
    expect((await db.selectFrom('events').select('traceparent').where('id', '=', recovered.id).executeTakeFirst())?.traceparent).toBe(tp(3));
  });

  it('an event recovery stored first is still fanned out, but not again to the endpoint recovery queued it for', async () => {
    const t = tenant();
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const e = event(t);
    expect(await repo.queueRecovery(a, [e], 10, t0)).toBe(1);
    expect((await repo.fanOut([e], { maxAttempts: 10, now: t0 })).created).toBe(1);
    expect(await queued(a)).toHaveLength(1);
    expect(await queued(b)).toEqual([{ event_id: e.id, state: 'pending', lock_owner: null }]);
  });
});

describe('claims', () => {
  it('per endpoint: each gets its room, oldest due first, however long the backlog of another', async () => {
    const t = tenant();
    const [busy, quiet] = [await endpoint(t), await endpoint(t)];
    const backlog = Array.from({ length: 300 }, () => event(t));
    // The busy endpoint's backlog is older than the quiet endpoint's one delivery.
    for (const [i, e] of backlog.entries()) await repo.fanOut([e], { maxAttempts: 10, now: at(i / 1000) });
    await sql`delete from jobs where endpoint_id = ${quiet}`.execute(db);
    const late = event(t);
    await repo.fanOut([late], { maxAttempts: 10, now: at(1) });
    await sql`delete from jobs where endpoint_id = ${busy} and event_id = ${late.id}`.execute(db);

    const jobs = await repo.claim({ owner: 'w2', now: at(2), endpoints: [], discover: { endpoints: 50, room: 8, exclude: [] } });
    const of = (id: string) => jobs.filter((j) => j.endpoint_id === id).map((j) => j.event_id);
    expect(of(busy)).toEqual(backlog.slice(0, 8).map((e) => e.id));
    expect(of(quiet)).toEqual([late.id]);
    // Known endpoints are topped up by their own room; excluded ones are not looked for.
    const more = await repo.claim({ owner: 'w2', now: at(2), endpoints: [{ id: busy, room: 3 }], discover: { endpoints: 5, room: 8, exclude: [busy, quiet] } });
    expect(more.map((j) => j.event_id)).toEqual(backlog.slice(8, 11).map((e) => e.id));
  });

  it('takes nothing not yet due, and nothing another worker holds', async () => {
    const t = tenant();
    const a = await endpoint(t);
    await repo.fanOut([event(t)], { maxAttempts: 10, now: at(60) });
    expect(await repo.claim({ owner: 'w3', now: at(59), endpoints: [{ id: a, room: 5 }] })).toEqual([]);
    expect(await repo.claim({ owner: 'w3', now: at(60), endpoints: [{ id: a, room: 5 }] })).toHaveLength(1);
    const other = await repo.claim({ owner: 'w4', now: at(61), endpoints: [{ id: a, room: 5 }], discover: { endpoints: 50, room: 5, exclude: [] } });
    expect(other.filter((j) => j.endpoint_id === a)).toEqual([]);
  });

  it('drops a delivery whose endpoint was deleted or disabled meanwhile instead of returning it', async () => {
    const t = tenant();
    const [deleted, disabled] = [await endpoint(t), await endpoint(t)];
    await repo.fanOut([event(t)], { maxAttempts: 10, now: t0 });
    await db.deleteFrom('endpoints').where('id', '=', deleted).execute();
    await db.updateTable('endpoints').set({ disabled: true }).where('id', '=', disabled).execute();
    expect(await repo.claim({ owner: 'w5', now: t0, endpoints: [{ id: deleted, room: 5 }, { id: disabled, room: 5 }] })).toEqual([]);
    expect(await queued(deleted)).toEqual([]);
    expect(await queued(disabled)).toEqual([]);
  });
});

describe('recording', () => {
  it('a delivered or finally failed delivery leaves the queue; a retried one is pending again; one of a deleted endpoint leaves no record', async () => {
    const t = tenant();
    const [a, gone] = [await endpoint(t), await endpoint(t)];
    const events = [event(t), event(t), event(t)];
    const { claimed } = await repo.fanOut(events, { maxAttempts: 10, now: t0, lease: { owner: 'w6', pendingFor: [] } });
    const of = (endpointId: string, e: StoredEvent) => claimed.find((j) => j.endpoint_id === endpointId && j.event_id === e.id)!;
    await db.deleteFrom('endpoints').where('id', '=', gone).execute();
    const [ok, gaveUp, retried] = events.map((e) => of(a, e));
    const batch = [finished(ok!, true, null), finished(gaveUp!, false, null), finished(retried!, false, at(300)), ...events.map((e) => finished(of(gone, e), true, null))];
    // The endpoints as they are now: the deleted one is missing.
    expect(await repo.record('w6', batch, recording)).toEqual([{ id: a, url: `https://${a}.example.com/hook`, disabled: false, disabledNow: false, consecutiveFailures: 2 }]);
    const left = await sql<{ event_id: string; state: string; attempts: number; next_attempt_at: Date; lock_owner: string | null }>`
      select event_id, state, attempts, next_attempt_at, lock_owner from jobs where endpoint_id = any(${[a, gone]}::text[])`.execute(db);
    expect(left.rows).toEqual([{ event_id: retried!.event_id, state: 'pending', attempts: 1, next_attempt_at: at(300), lock_owner: null }]);
    const records = await sql<{ endpoint_id: string; event_id: string; status: string; next_attempt_at: Date | null }>`
      select endpoint_id, event_id, status, next_attempt_at from attempts where endpoint_id = any(${[a, gone]}::text[]) order by id`.execute(db);
    expect(records.rows).toEqual([
      { endpoint_id: a, event_id: ok!.event_id, status: 'delivered', next_attempt_at: null },
      { endpoint_id: a, event_id: gaveUp!.event_id, status: 'failed', next_attempt_at: null },
      { endpoint_id: a, event_id: retried!.event_id, status: 'failed', next_attempt_at: at(300) },
    ]);
  });

  it('counts failures per endpoint; at the threshold it disables the endpoint, gives no retry and cancels what was pending', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const events = [event(t), event(t), event(t), event(t)];
    const { claimed } = await repo.fanOut(events.slice(0, 3), { maxAttempts: 10, now: t0, lease: { owner: 'w9', pendingFor: [] } });
    await repo.fanOut(events.slice(3), { maxAttempts: 10, now: t0 });
    const limits = { ...recording, threshold: 5 };
    // A success then two failures: the count is the failures after the last success.
    expect(await repo.record('w9', [finished(claimed[0]!, true, null), finished(claimed[1]!, false, at(60))], limits)).toEqual([
      { id: a, url: `https://${a}.example.com/hook`, disabled: false, disabledNow: false, consecutiveFailures: 1 },
    ]);
    const count = async () => (await db.selectFrom('endpoints').select(['consecutive_failures', 'disabled', 'disabled_reason']).where('id', '=', a).executeTakeFirstOrThrow());
    expect(await count()).toEqual({ consecutive_failures: 1, disabled: false, disabled_reason: null });
    await sql`update endpoints set consecutive_failures = 4 where id = ${a}`.execute(db);
    expect(await repo.record('w9', [finished(claimed[2]!, false, at(60))], limits)).toEqual([{ id: a, url: `https://${a}.example.com/hook`, disabled: true, disabledNow: true, consecutiveFailures: 5 }]);
    expect(await count()).toEqual({ consecutive_failures: 5, disabled: true, disabled_reason: 'test reason' });
    // The attempt that disabled it has no next attempt; the retry scheduled before and the pending delivery are cancelled,
    // and the record that announced that retry no longer does.
    expect(await queued(a)).toEqual([]);
    const nextOf = async (job: ClaimedJob) => (await db.selectFrom('attempts').select(['next_attempt_at']).where('job_id', '=', job.id).executeTakeFirstOrThrow()).next_attempt_at;
    expect(await nextOf(claimed[2]!)).toBeNull();
    expect(await nextOf(claimed[1]!)).toBeNull();
    // The success's record is untouched.
    expect(await db.selectFrom('attempts').select(['status']).where('job_id', '=', claimed[0]!.id).execute()).toEqual([{ status: 'delivered' }]);
  });

  it('a batch recorded again (the answer to its commit was lost) counts nothing twice; nor do attempts of deliveries no longer held', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const events = [event(t), event(t), event(t)];
    const { claimed } = await repo.fanOut(events, { maxAttempts: 10, now: t0, lease: { owner: 'w10', pendingFor: [] } });
    const failures = async () => (await db.selectFrom('endpoints').select('consecutive_failures').where('id', '=', a).executeTakeFirstOrThrow()).consecutive_failures;
    const batch = [finished(claimed[0]!, false, at(60)), finished(claimed[1]!, false, at(60))];
    await repo.record('w10', batch, recording);
    expect(await failures()).toBe(2);
    // The same batch again, as the dispatcher sends it when it never heard back: nothing more.
    expect(await repo.record('w10', batch, recording)).toEqual([{ id: a, url: `https://${a}.example.com/hook`, disabled: false, disabledNow: false, consecutiveFailures: 2 }]);
    expect(await failures()).toBe(2);
    expect(await db.selectFrom('attempts').select('id').where('endpoint_id', '=', a).execute()).toHaveLength(2);
    // A delivery taken over meanwhile (handed back here): its late attempt neither counts nor is recorded.
    await repo.release('w10', [claimed[2]!.id]);
    await repo.record('w10', [finished(claimed[2]!, false, at(60))], recording);
    expect(await failures()).toBe(2);
    expect(await db.selectFrom('attempts').select('id').where('endpoint_id', '=', a).execute()).toHaveLength(2);
  });

  it('a retry cancelled by a disable, or dropped at a claim, leaves no record announcing it', async () => {
    const t = tenant();
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const events = [event(t), event(t)];
    const { claimed } = await repo.fanOut(events, { maxAttempts: 10, now: t0, lease: { owner: 'w12', pendingFor: [] } });
    await repo.record('w12', claimed.map((j) => finished(j, false, at(60))), recording);
    const announced = async (endpointId: string) =>
      (await db.selectFrom('attempts').select(['event_id', 'next_attempt_at']).where('endpoint_id', '=', endpointId).orderBy('id').execute()).map((r) => r.next_attempt_at);
    expect(await announced(a)).toEqual([at(60), at(60)]);
    // Disabled by a user: its pending retries are cancelled.
    await repo.cancelPending([a]);
    expect(await queued(a)).toEqual([]);
    expect(await announced(a)).toEqual([null, null]);
    // Disabled behind a claim's back: the claim drops the due retries.
    await db.updateTable('endpoints').set({ disabled: true }).where('id', '=', b).execute();
    expect(await repo.claim({ owner: 'w12', now: at(60), endpoints: [{ id: b, room: 5 }] })).toEqual([]);
    expect(await queued(b)).toEqual([]);
    expect(await announced(b)).toEqual([null, null]);
  });

  it('changes nothing a worker no longer holds; the attempt row is written once, by the holder', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const { claimed } = await repo.fanOut([event(t)], { maxAttempts: 10, now: t0, lease: { owner: 'w7', pendingFor: [] } });
    const job = claimed[0]!;
    await repo.release('w7', [job.id]);
    const attempt = finished(job, true, null);
    await repo.record('w7', [attempt], recording);
    expect(await queued(a)).toEqual([{ event_id: job.event_id, state: 'pending', lock_owner: null }]);
    const [again] = await repo.claim({ owner: 'w8', now: t0, endpoints: [{ id: a, room: 1 }] });
    const holders = { ...attempt, attemptId: attemptId(), job: again! };
    await repo.record('w8', [holders], recording);
    // The stale worker again, and the holder's batch again (a record retried after an error whose commit went through).
    await repo.record('w7', [attempt], recording);
    await repo.record('w8', [holders], recording);
    expect(await queued(a)).toEqual([]);
    const rows = await sql<{ id: string }>`select id from attempts where job_id = ${job.id}`.execute(db);
    expect(rows.rows).toEqual([{ id: holders.attemptId }]);
  });

  it('records a retried delivery once per attempt, each attempt its own row', async () => {
    const t = tenant();
    const a = await endpoint(t);
    const { claimed } = await repo.fanOut([event(t)], { maxAttempts: 10, now: t0, lease: { owner: 'w10', pendingFor: [] } });
    const first = finished(claimed[0]!, false, t0);
    await repo.record('w10', [first], recording);
    await repo.record('w10', [first], recording);
    const [again] = await repo.claim({ owner: 'w10', now: t0, endpoints: [{ id: a, room: 1 }] });
    expect(again!.attempts).toBe(1);
    const second = finished(again!, true, null);
    await repo.record('w10', [second], recording);
    const rows = await sql<{ id: string; attempt: number; status: string }>`select id, attempt, status from attempts where endpoint_id = ${a} order by id`.execute(db);
    expect(rows.rows).toEqual([
      { id: first.attemptId, attempt: 1, status: 'failed' },
      { id: second.attemptId, attempt: 2, status: 'delivered' },
    ]);
  });
});

describe('leases', () => {
  it('hands back the deliveries of a worker whose lease ran out, or that has no lease at all, and no others', async () => {
    const t = tenant();
    const a = await endpoint(t);
    await repo.heartbeat('dead', at(10));
    await repo.heartbeat('alive', at(100));
    for (const owner of ['dead', 'alive', 'unknown', 'me']) await repo.fanOut([event(t)], { maxAttempts: 10, now: t0, lease: { owner, pendingFor: [] } });
    const owners = async () => (await queued(a)).map((j) => j.lock_owner);
    // At 5 s 'dead' is still alive: only the delivery held under no lease at all is handed back.
    expect(await repo.reapExpired('me', at(5))).toBeGreaterThanOrEqual(1);
    expect(await owners()).toEqual(['dead', 'alive', null, 'me']);
    expect(await repo.reapExpired('me', at(11))).toBeGreaterThanOrEqual(1);
    expect(await owners()).toEqual([null, 'alive', null, 'me']);
    const workers = await db.selectFrom('workers').select('owner').where('owner', 'in', ['dead', 'alive']).execute();
    expect(workers).toEqual([{ owner: 'alive' }]);
    // The reaped worker learns it at its next renewal; the live one renews.
    expect(await repo.renew('dead', at(20))).toBe(false);
    expect(await repo.renew('alive', at(200))).toBe(true);
  });
});

describe('delivery ids', () => {
  it('go past 2^31: the queue key only grows as deliveries come and go, and is read back as the bigint it is', async () => {
    await sql`alter table jobs alter column id restart with 3000000000`.execute(db);
    const t = tenant();
    const a = await endpoint(t);
    const { claimed } = await repo.fanOut([event(t)], { maxAttempts: 10, now: t0, lease: { owner: 'w11', pendingFor: [] } });
    expect(claimed.map((j) => j.id)).toEqual([3_000_000_000]);
    await repo.record('w11', [finished(claimed[0]!, false, t0)], recording);
    const [again] = await repo.claim({ owner: 'w11', now: t0, endpoints: [{ id: a, room: 1 }] });
    expect(again!.id).toBe(3_000_000_000);
    await repo.record('w11', [finished(again!, true, null)], recording);
    expect(await queued(a)).toEqual([]);
    const rows = await sql<{ job_id: number }>`select job_id from attempts where endpoint_id = ${a}`.execute(db);
    expect(rows.rows).toEqual([{ job_id: 3_000_000_000 }, { job_id: 3_000_000_000 }]);
  });
});
