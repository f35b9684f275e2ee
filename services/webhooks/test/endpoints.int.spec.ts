/**
 * The endpoints API's work behind the answers, against the real database:
 * - recoveries, with the event stream played by a list the test controls (pausable,
 *   failing on demand): a recovery queues its window's events of its endpoint's tenant once
 *   each, runs one at a time per endpoint, saves its progress as it goes, resumes after a
 *   shutdown or on another instance where it was, and ends with its endpoint (the
 *   end-to-end path through the real stream is in apps/all-in-one);
 * - updates and redeliveries racing with the endpoint's state;
 * - creations racing for the environment's room and the organization's plan.
 * - the deletion of an environment: its endpoints go with their queued deliveries.
 */
import path from 'node:path';
import { createDb, sql, transactor, type Kysely } from '@mailroom/db';
import { DEFAULT_PLAN_LIMITS, newId, type EventEnvelope, type OrganizationLimits, type Tenant } from '@mailroom/contracts';
import { createLogger, DEVELOPMENT_ENCRYPTION_KEY, ManualClock, SecretBox } from '@mailroom/platform';
import { DeletedEnvironments } from '@mailroom/runtime';
import { createTestContext, genericPlanOf, messageReceivedEvent, migratedDb, waitFor, type TestContext } from '@mailroom/testing';
import { Endpoints } from '../src/domain/endpoints';
import { RetryPolicy } from '../src/domain/retry-policy';
import { IpPolicy } from '../src/domain/ip-policy';
import type { EventHistory } from '../src/domain/ports';
import { RecoveryRunner, RECOVERY_LEASE_MS } from '../src/domain/recoveries';
import { DeliveryRepository } from '../src/repo/delivery.repository';
import { EndpointRepository } from '../src/repo/endpoint.repository';
import { RecoveryRepository } from '../src/repo/recovery.repository';
import type { WebhooksDb } from '../src/repo/tables';
import { insertEndpoint, tenant } from './fixtures';

let ctx: TestContext;
let db: Kysely<WebhooksDb>;
const t0 = new Date('2026-11-22T10:00:00Z');
const log = createLogger({ service: 'test', level: 'silent' });
const runners: RecoveryRunner[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<WebhooksDb>(ctx, { schema: 'webhooks', migrationsDir: path.join(__dirname, '..', 'migrations') });
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  // A runner takes any running recovery: none of one test is left for the next.
  await db.deleteFrom('recoveries').execute();
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const endpoint = (t: Tenant, types: string[] | null = null) => insertEndpoint(db, t, t0, types);

/** The event stream: messages in sequence order (1, 2, ...), published at `time`. */
class Stream implements EventHistory {
  readonly messages: { seq: number; time: Date; event: EventEnvelope; traceparent: string | null }[] = [];
  readonly reads: ({ seq: number } | { time: Date })[] = [];
  /** Reads stop before this sequence until release() (a run in progress). */
  private gate: { seq: number; open: Promise<void>; release: () => void } | undefined;
  failing = false;

  publish(event: EventEnvelope, time = new Date(event.timestamp), traceparent: string | null = null): EventEnvelope {
    this.messages.push({ seq: this.messages.length + 1, time, event, traceparent });
    return event;
  }

  holdAt(seq: number): void {
    let release!: () => void;
    const open = new Promise<void>((r) => (release = r));
    this.gate = { seq, open, release };
  }

  release(): void {
    this.gate?.release();
    this.gate = undefined;
  }

  async read(from: { seq: number } | { time: Date }, until: Date, onEvent: (event: EventEnvelope | undefined, seq: number, traceparent: string | null) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
    this.reads.push(from);
    if (this.failing) throw new Error('stream unreachable');
    for (const m of this.messages) {
      if ('seq' in from ? m.seq < from.seq : m.time < from.time) continue;
      if (m.time > until) return;
      const gate = this.gate;
      if (gate && m.seq >= gate.seq) await Promise.race([gate.open, new Promise((r) => signal?.addEventListener('abort', r, { once: true }))]);
      if (signal?.aborted) return;
      await onEvent(m.event, m.seq, m.traceparent);
    }
  }
}

const unlimited: OrganizationLimits = { plan: 'enterprise', limits: DEFAULT_PLAN_LIMITS.enterprise, plans: DEFAULT_PLAN_LIMITS };

/** A recovery world on its own clock (at minute 60) and stream, with one tenant (whose organization is on `limits`). */
function setup(limits: OrganizationLimits = unlimited) {
  const clock = new ManualClock(at(60));
  const stream = new Stream();
  const t = tenant();
  const recoveries = new RecoveryRepository(db);
  const endpoints = new EndpointRepository(db);
  const deliveries = new DeliveryRepository(db);
  // Monotonic time that moves 10 s at each look: progress is saved after every message.
  let mono = 0;
  const runner = (owner: string, wake = () => {}, renewEveryMs?: number) => {
    const r = new RecoveryRunner({ transact: transactor(db), recoveries, endpoints, deliveries, history: stream, clock, log, wake, owner, maxAttempts: 10, pollIntervalMs: 60_000, monotonic: () => (mono += 10_000), ...(renewEveryMs ? { renewEveryMs } : {}) });
    runners.push(r);
    return r;
  };
  const api = new Endpoints({
    transact: transactor(db),
    endpoints,
    deliveries,
    deleted: new DeletedEnvironments<WebhooksDb>(),
    recoveries,
    clock,
    box: new SecretBox(DEVELOPMENT_ENCRYPTION_KEY),
    urls: { allowHttp: true, ips: new IpPolicy() },
    maxEndpoints: 3,
    plans: { of: async () => limits },
    inboxes: { inEnvironment: async () => true },
    runRecoveries: () => {},
    wake: () => {},
    changed: () => {},
    retries: new RetryPolicy(),
  });
  return { clock, stream, t, recoveries, endpoints, runner, api };
}

const row = (id: string) => db.selectFrom('recoveries').selectAll().where('id', '=', id).executeTakeFirst();
const queuedEvents = async (endpointId: string) => (await db.selectFrom('jobs').select('event_id').where('endpoint_id', '=', endpointId).where('origin', '=', 'recover').orderBy('event_id').execute()).map((j) => j.event_id);
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

describe('a recovery', () => {
  it("queues once each the window's events of its endpoint's tenant and types, and says how many", async () => {
    const { stream, runner, api, t } = setup();
    const e = await endpoint(t);
    const inWindow = [stream.publish(messageReceivedEvent(t, at(10))), stream.publish(messageReceivedEvent(t, at(20)))];
    stream.publish(messageReceivedEvent(tenant(), at(15)));
    stream.publish(messageReceivedEvent(t, at(1)));
    stream.publish(messageReceivedEvent(t, at(30)));
    // Stamped inside the window, published after it (an outbox relay running late): still in it.
    const late = stream.publish(messageReceivedEvent(t, at(29)), at(31));
    const started = await api.recover(t, e, { since: at(5).toISOString(), until: at(30).toISOString() });
    expect(started).toMatchObject({ status: 'running', queued: 0, since: at(5).toISOString(), until: at(30).toISOString() });
    runner('a').start();
    await waitFor(async () => (await row(started.id))?.status === 'finished');
    expect(await api.recovery(t, e, started.id)).toMatchObject({ status: 'finished', queued: 3, finished_at: at(60).toISOString() });
    expect(await queuedEvents(e)).toEqual([...inWindow, late].map((x) => x.id).sort());
    // Again: all three are queued already, none twice.
    const again = await api.recover(t, e, { since: at(5).toISOString(), until: at(30).toISOString() });
    runner('b').start();
    await waitFor(async () => (await row(again.id))?.status === 'finished');
    expect((await row(again.id))!.queued).toBe(0);
    expect(await queuedEvents(e)).toHaveLength(3);
    // Another tenant's id is not found.
    await expect(api.recovery(tenant(), e, started.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps with each event it stores the trace the event was published in (its attempts are its children), none when it had none', async () => {
    const { stream, runner, api, t } = setup();
    const e = await endpoint(t);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traced = stream.publish(messageReceivedEvent(t, at(10)), at(10), traceparent);
    const untraced = stream.publish(messageReceivedEvent(t, at(11)));
    const started = await api.recover(t, e, { since: at(5).toISOString(), until: at(30).toISOString() });
    runner('a').start();
    await waitFor(async () => (await row(started.id))?.status === 'finished');
    const stored = await db.selectFrom('events').select(['id', 'traceparent']).where('id', 'in', [traced.id, untraced.id]).execute();
    expect(Object.fromEntries(stored.map((r) => [r.id, r.traceparent]))).toEqual({ [traced.id]: traceparent, [untraced.id]: null });
  });

  it('runs one at a time per endpoint: a second request while one runs is a conflict naming it', async () => {
    const { api, t } = setup();
    const [e, other] = [await endpoint(t), await endpoint(t)];
    const first = await api.recover(t, e, { since: at(0).toISOString() });
    await expect(api.recover(t, e, { since: at(10).toISOString() })).rejects.toMatchObject({ code: 'conflict', details: [{ path: 'recovery_id', message: first.id }] });
    expect((await api.recover(t, other, { since: at(0).toISOString() })).status).toBe('running');
  });

  it('resumes where it stopped after a shutdown, on another instance, without queueing anything twice', async () => {
    const { stream, runner, api, t } = setup();
    const e = await endpoint(t);
    const events = [1, 2, 3, 4, 5].map((m) => stream.publish(messageReceivedEvent(t, at(m))));
    const r = await api.recover(t, e, { since: at(0).toISOString() });
    stream.holdAt(3);
    const first = runner('first');
    first.start();
    await waitFor(async () => (await row(r.id))?.next_seq === 3);
    await first.stop();
    expect(await row(r.id)).toMatchObject({ status: 'running', queued: 2, lease_owner: null });
    stream.release();
    runner('second').start();
    await waitFor(async () => (await row(r.id))?.status === 'finished');
    expect(stream.reads.at(-1)).toEqual({ seq: 3 });
    expect((await row(r.id))!.queued).toBe(5);
    expect(await queuedEvents(e)).toEqual(events.map((x) => x.id).sort());
  });

  it('is taken over when its lease runs out, and the first instance, late, changes nothing', async () => {
    const { clock, stream, runner, api, t } = setup();
    const e = await endpoint(t);
    const events = [1, 2, 3].map((m) => stream.publish(messageReceivedEvent(t, at(m))));
    const r = await api.recover(t, e, { since: at(0).toISOString() });
    stream.holdAt(2);
    // Each saved chunk with deliveries in it wakes the dispatcher.
    let stalledSaves = 0;
    runner('stalled', () => stalledSaves++).start();
    await waitFor(async () => (await row(r.id))?.next_seq === 2);
    expect(stalledSaves).toBe(1);
    clock.advance(RECOVERY_LEASE_MS + 1);
    // The instance that runs it does not start it a second time beside itself.
    const until = new Date(clock.now().getTime() + RECOVERY_LEASE_MS);
    expect(await new RecoveryRepository(db).take('stalled', clock.now(), until, [r.id])).toBeUndefined();
    runner('taker').start();
    await waitFor(async () => (await row(r.id))?.lease_owner === 'taker');
    // Both reads go on now: the stalled one's progress is refused (the lease is no longer its own).
    stream.release();
    await waitFor(async () => (await row(r.id))?.status === 'finished');
    expect(await row(r.id)).toMatchObject({ queued: 3, lease_owner: null });
    expect(stalledSaves).toBe(1);
    expect(await queuedEvents(e)).toEqual(events.map((x) => x.id).sort());
  });

  it('keeps its lease through a read that waits, and ends the run as failed when the stream sends nothing for 5 minutes', async () => {
    const { clock, stream, runner, api, t } = setup();
    const e = await endpoint(t);
    stream.publish(messageReceivedEvent(t, at(1)));
    const r = await api.recover(t, e, { since: at(0).toISOString() });
    // The read waits before its first message (the stream does not answer).
    stream.holdAt(1);
    runner('waiting', () => {}, 20).start();
    await waitFor(async () => (await row(r.id))?.lease_owner === 'waiting');
    clock.advance(RECOVERY_LEASE_MS + 1);
    // Renewed while it waits: still its own, however long the read takes.
    await waitFor(
      async () => {
        const now = await row(r.id);
        // Still its own and not yet failed: the renewal, not a failed run's retry time, moved lease_until.
        return now!.lease_owner === 'waiting' && now!.failures === 0 && now!.lease_until!.getTime() > clock.now().getTime();
      },
      { what: 'the lease renewed' },
    );
    // Each look advances the monotonic clock 10 s here: 5 minutes without a message end the run, to be tried again.
    await waitFor(async () => (await row(r.id))?.failures === 1, { what: 'the stalled run to end as failed' });
    expect(await row(r.id)).toMatchObject({ status: 'running', lease_owner: null, queued: 0 });
    stream.release();
  });

  it('ends with its endpoint: deleted, it is gone; disabled, it fails with the reason', async () => {
    const { stream, runner, api, t } = setup();
    const [deleted, disabled] = [await endpoint(t), await endpoint(t)];
    [1, 2, 3].forEach((m) => stream.publish(messageReceivedEvent(t, at(m))));
    const gone = await api.recover(t, deleted, { since: at(0).toISOString() });
    const off = await api.recover(t, disabled, { since: at(0).toISOString() });
    stream.holdAt(2);
    runner('a').start();
    await waitFor(async () => (await row(gone.id))?.next_seq === 2 && (await row(off.id))?.next_seq === 2);
    await db.deleteFrom('endpoints').where('id', '=', deleted).execute();
    await db.updateTable('endpoints').set({ disabled: true }).where('id', '=', disabled).execute();
    stream.release();
    await waitFor(async () => (await row(off.id))?.status === 'failed');
    expect(await row(gone.id)).toBeUndefined();
    expect(await row(off.id)).toMatchObject({ error: 'the endpoint was disabled during the recovery', queued: 1 });
  });

  it('is tried again after a failed run, and given up after five in a row', async () => {
    const { clock, stream, runner, api, t } = setup();
    const e = await endpoint(t);
    const r = await api.recover(t, e, { since: at(0).toISOString() });
    stream.failing = true;
    const a = runner('a');
    a.start();
    for (let failures = 1; failures <= 5; failures++) {
      await waitFor(async () => (await row(r.id))?.failures === failures);
      // Not taken again before its retry time.
      if (failures < 5) {
        a.kick();
        expect((await row(r.id))!.status).toBe('running');
        clock.set(new Date((await row(r.id))!.lease_until!.getTime() + 1));
        a.kick();
      }
    }
    expect(await row(r.id)).toMatchObject({ status: 'failed', error: 'the event stream or the database could not be read', finished_at: clock.now() });
    expect(stream.reads).toHaveLength(5);
    expect(await sql`select 1 from jobs where endpoint_id = ${e}`.execute(db).then((x) => x.rows)).toEqual([]);
  });
});

describe('creation', () => {
  it('stops at the most endpoints an environment may have, also when requests race', async () => {
    const { api, t } = setup();
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => api.create(t, { url: `https://hooks${i}.example.com/` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of results.filter((x) => x.status === 'rejected')) expect(r.reason).toMatchObject({ code: 'conflict' });
    // Another environment has its own room.
    expect((await api.create(tenant(), { url: 'https://hooks.example.com/' })).id).toMatch(/^whe_/);
    const [first] = await db.selectFrom('endpoints').select('id').where('org_id', '=', t.org_id).execute();
    await api.delete(t, first!.id);
    expect((await api.create(t, { url: 'https://again.example.com/' })).url).toBe('https://again.example.com/');
  });

  it("stops at the plan's endpoints for the whole organization, also when requests race from several environments", async () => {
    const plans = { ...DEFAULT_PLAN_LIMITS, free: { ...DEFAULT_PLAN_LIMITS.free, webhook_endpoints: 4 } };
    const { api, t } = setup({ plan: 'free', limits: plans.free, plans });
    const envs = [t, { ...t, env_id: newId('environment') }, { ...t, env_id: newId('environment') }];
    const results = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => api.create(envs[i % 3]!, { url: `https://hooks${i}.example.com/` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    for (const r of results.filter((x) => x.status === 'rejected')) {
      expect(r.reason).toMatchObject({ code: 'plan_limit', status: 403, message: 'the free plan allows 4 webhook endpoints; the pro plan allows 50: ask for it with POST /api/v1/org/upgrade-request' });
    }
    expect(await db.selectFrom('endpoints').select('id').where('org_id', '=', t.org_id).execute()).toHaveLength(4);
  });
});

describe('usage', () => {
  it('counts the endpoints of every environment of the organization, disabled ones too, and no other organization\'s', async () => {
    const t = tenant();
    const disabled = await endpoint(t);
    await endpoint({ org_id: t.org_id, env_id: newId('environment') });
    await endpoint(tenant());
    await db.updateTable('endpoints').set({ disabled: true, disabled_reason: 'x', disabled_at: t0 }).where('id', '=', disabled).execute();
    expect(await new EndpointRepository(db).countInOrg(t.org_id)).toBe(2);
  });

  it('reads an index that starts with the organization', async () => {
    const org = newId('organization');
    const repo = new EndpointRepository(db);
    const plan = await genericPlanOf(db, (trx) => repo.countInOrg(org, trx), [org]);
    expect(plan).toMatch(/endpoints_by_tenant/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});

describe('a deleted environment', () => {
  it('loses its endpoints and their queued deliveries, refuses new ones, and changes nothing when the fact comes again', async () => {
    const { api, t } = setup();
    const deliveries = new DeliveryRepository(db);
    const [a, b] = [await endpoint(t), await endpoint(t)];
    const kept = await endpoint({ org_id: t.org_id, env_id: newId('environment') });
    const theirs = await endpoint({ org_id: newId('organization'), env_id: t.env_id });
    for (const e of [a, b, kept, theirs]) expect(await deliveries.queueManual({ endpoint_id: e, event_id: newId('event'), now: t0 })).toBe(true);
    const fact = { ...t, deleted_at: t0.toISOString() };
    expect(await api.environmentDeleted(fact)).toEqual({ removed: 2 });
    const left = async () => (await db.selectFrom('jobs').select('endpoint_id').where('endpoint_id', 'in', [a, b, kept, theirs]).execute()).map((j) => j.endpoint_id).sort();
    expect(await left()).toEqual([kept, theirs].sort());
    expect(await db.selectFrom('endpoints').select('id').where('id', 'in', [a, b]).execute()).toEqual([]);
    await expect(api.create(t, { url: 'https://late.example.com/' })).rejects.toMatchObject({ code: 'not_found', message: 'environment not found' });
    expect(await api.environmentDeleted(fact)).toEqual({ removed: 0 });
    expect(await left()).toEqual([kept, theirs].sort());
  });
});

describe('updates and redeliveries', () => {
  const failuresOf = async (id: string) => (await db.selectFrom('endpoints').select('consecutive_failures').where('id', '=', id).executeTakeFirstOrThrow()).consecutive_failures;

  it('disabled: false resets the failure count only of a disabled endpoint; events: null subscribes to every type again', async () => {
    const { api, t } = setup();
    const e = await endpoint(t, ['message.sent']);
    await db.updateTable('endpoints').set({ consecutive_failures: 12 }).where('id', '=', e).execute();
    // A client that sends disabled: false with every update does not keep a failing endpoint from being disabled.
    expect(await api.update(t, e, { description: 'x', disabled: false, events: null })).toMatchObject({ disabled: false, events: expect.arrayContaining(['message.received', 'domain.verified']) });
    expect(await failuresOf(e)).toBe(12);
    expect((await db.selectFrom('endpoints').select('event_types').where('id', '=', e).executeTakeFirstOrThrow()).event_types).toBeNull();
    await api.update(t, e, { disabled: true });
    expect(await api.update(t, e, { disabled: false })).toMatchObject({ disabled: false, disabled_reason: null });
    expect(await failuresOf(e)).toBe(0);
  });

  it('a redelivery that meets a delete or a disable made after the endpoint was read is refused, and queues nothing', async () => {
    const deliveries = new DeliveryRepository(db);
    const t = tenant();
    const [deleted, disabled, enabled] = [await endpoint(t), await endpoint(t), await endpoint(t)];
    await db.deleteFrom('endpoints').where('id', '=', deleted).execute();
    await db.updateTable('endpoints').set({ disabled: true }).where('id', '=', disabled).execute();
    const event_id = newId('event');
    expect(await deliveries.queueManual({ endpoint_id: deleted, event_id, now: t0 })).toBe(false);
    expect(await deliveries.queueManual({ endpoint_id: disabled, event_id, now: t0 })).toBe(false);
    expect(await deliveries.queueManual({ endpoint_id: enabled, event_id, now: t0 })).toBe(true);
    const jobs = await db.selectFrom('jobs').select(['endpoint_id', 'origin', 'max_attempts']).where('event_id', '=', event_id).execute();
    expect(jobs).toEqual([{ endpoint_id: enabled, origin: 'manual', max_attempts: 1 }]);
  });

  it('a redelivery waits for a disable being committed, and then queues nothing', async () => {
    const deliveries = new DeliveryRepository(db);
    const e = await endpoint(tenant());
    let disabled!: () => void;
    let commit!: () => void;
    const updated = new Promise<void>((r) => (disabled = r));
    const open = new Promise<void>((r) => (commit = r));
    const disabling = db.transaction().execute(async (trx) => {
      await trx.updateTable('endpoints').set({ disabled: true }).where('id', '=', e).execute();
      disabled();
      await open;
    });
    await updated;
    const queued = deliveries.queueManual({ endpoint_id: e, event_id: newId('event'), now: t0 });
    let settled = false;
    void queued.finally(() => (settled = true));
    // Committed only once the redelivery has answered or waits for the endpoint's row (seen from a connection of its own).
    const watcher = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: 'webhooks', max: 1 });
    try {
      const waiting = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(watcher)).rows[0]!.n > 0;
      await waitFor(async () => settled || (await waiting()), { what: 'the redelivery to answer or wait' });
    } finally {
      await watcher.destroy();
    }
    commit();
    await disabling;
    expect(await queued).toBe(false);
    expect(await db.selectFrom('jobs').select('id').where('endpoint_id', '=', e).execute()).toEqual([]);
  });

  it('a recovery of an endpoint deleted after it was read is a 404, not an error', async () => {
    const { api, endpoints, t } = setup();
    const e = await endpoint(t);
    const stale = (await endpoints.find(t, e))!;
    await db.deleteFrom('endpoints').where('id', '=', e).execute();
    const find = endpoints.find.bind(endpoints);
    endpoints.find = async () => stale;
    try {
      await expect(api.recover(t, e, { since: at(0).toISOString() })).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      endpoints.find = find;
    }
  });
});
