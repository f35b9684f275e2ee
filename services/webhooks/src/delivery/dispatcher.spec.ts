import { randomBytes } from 'node:crypto';
import { createLogger, ManualClock, SecretBox } from '@mailroom/platform';
import { RetryPolicy } from '../domain/retry-policy';
import type { ClaimedJob, ClaimRequest, DeliveryRepository, FinishedAttempt, RecordedEndpoint } from '../repo/delivery.repository';
import { CLAIM_AHEAD, Dispatcher, type DispatcherOptions, type Poster } from './dispatcher';
import { FLOW_HORIZON_MS, INTAKE_BACKLOG_PER_SLOT, INTAKE_WAIT_MS } from './intake';
import type { PostResult } from './http-client';

const MAX_IN_FLIGHT = 16;
const PER_ENDPOINT = 4;
const HIGH = MAX_IN_FLIGHT * INTAKE_BACKLOG_PER_SLOT;
/** The lease new work is handed over under (the dispatcher's own name). */
const lease = { owner: 'w1', pendingFor: [] };
const box = new SecretBox(randomBytes(32).toString('base64'));

/** A receiver per URL whose answers the test hands out one at a time. */
class GatedPoster implements Poster {
  private readonly waiting = new Map<string, ((r: PostResult) => void)[]>();

  private readonly bodies = new Map<string, string[]>();

  post(url: string, body: Buffer, _headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult> {
    this.bodies.set(url, [...(this.bodies.get(url) ?? []), (JSON.parse(body.toString('utf8')) as { id: string }).id]);
    return new Promise((resolve) => {
      const list = this.waiting.get(url) ?? [];
      list.push(resolve);
      this.waiting.set(url, list);
      abort?.addEventListener(
        'abort',
        () => {
          // Cut short: no longer waiting for an answer.
          list.splice(list.indexOf(resolve), 1);
          resolve({ ok: false, httpStatus: 0, error: 'aborted', timedOut: false, durationMs: 0 });
        },
        { once: true },
      );
    });
  }

  /** Event ids of the requests to `url`, in the order they started. */
  sent(url: string): string[] {
    return this.bodies.get(url) ?? [];
  }

  running(url: string): number {
    return this.waiting.get(url)?.length ?? 0;
  }

  /** Answers the oldest request to `url` (200 unless told); resolves once the dispatcher has moved on. */
  async answer(url: string, result: PostResult = { ok: true, httpStatus: 200, timedOut: false, durationMs: 1 }): Promise<void> {
    const resolve = this.waiting.get(url)?.shift();
    if (!resolve) throw new Error(`no request to ${url} is waiting`);
    resolve(result);
    await new Promise((r) => setImmediate(r));
  }
}

/** The answers the shared mocks give unless a test says otherwise (beforeEach puts them back). */
const nothingDue = async (_req: ClaimRequest): Promise<ClaimedJob[]> => [];
const done = async (_owner: string, _ids: number[]): Promise<void> => {};
const noEndpoints = async (_ids: string[]): Promise<RecordedEndpoint[]> => [];
const renewed = async (_owner: string, _until: Date): Promise<boolean> => true;
const beat = async (_owner: string, _until: Date): Promise<void> => {};
const claim = jest.fn(nothingDue);
/** An endpoint as a record reads it, with no failures. */
const view = (id: string, url: string, disabled: boolean): RecordedEndpoint => ({ id, url, disabled, disabledNow: false, consecutiveFailures: 0 });
/** By default each endpoint of the batch is as its deliveries knew it: enabled, same URL, no failures. */
const asRecorded = async (_owner: string, batch: FinishedAttempt[]): Promise<RecordedEndpoint[]> =>
  [...new Map(batch.map((a) => [a.job.endpoint_id, a.job.url])).entries()].map(([id, url]) => ({ id, url, disabled: false, disabledNow: false, consecutiveFailures: 0 }));
const record = jest.fn(asRecorded);
const discard = jest.fn(done);
const release = jest.fn(done);
const endpointStates = jest.fn(noEndpoints);
const renew = jest.fn(renewed);
const heartbeat = jest.fn(beat);
const repo = {
  renew,
  heartbeat,
  record,
  discard,
  release,
  endpointStates,
  retire: async () => {},
  claim,
  reapExpired: async () => 0,
  leasedBefore: async () => [],
} as unknown as DeliveryRepository;

let nextId = 1;
function jobs(endpointId: string, n: number): ClaimedJob[] {
  return Array.from({ length: n }, () => ({
    id: nextId++,
    endpoint_id: endpointId,
    event_id: `evt_${nextId}`,
    origin: 'event' as const,
    attempts: 0,
    max_attempts: 10,
    body: Buffer.from(JSON.stringify({ id: `evt_${nextId}` })),
    url: `https://${endpointId}.example.com/`,
    secret_sealed: box.seal('whsec_test', endpointId),
  }));
}

describe('Dispatcher intake', () => {
  let now: number;
  let http: GatedPoster;
  let dispatcher: Dispatcher;
  /** A dispatcher as w1, on this test's clock, with `opts` over the defaults. */
  const build = (poster: Poster, opts: Partial<DispatcherOptions> = {}) =>
    new Dispatcher(repo, poster, box, new RetryPolicy(), new ManualClock(new Date('2026-11-22T10:00:00Z')), createLogger({ service: 'test', level: 'silent' }), {
      owner: 'w1',
      maxInFlight: MAX_IN_FLIGHT,
      perEndpoint: PER_ENDPOINT,
      leaseMs: 30_000,
      pollIntervalMs: 60_000,
      shutdownGraceMs: 0,
      failureThreshold: 50,
      monotonic: () => now,
      ...opts,
    });

  beforeEach(() => {
    // mockReset, not mockClear: a *Once answer a test queued and did not use (it failed early)
    // must not answer in the next test. A reset leaves no implementation: the defaults go back.
    claim.mockReset().mockImplementation(nothingDue);
    record.mockReset().mockImplementation(asRecorded);
    discard.mockReset().mockImplementation(done);
    release.mockReset().mockImplementation(done);
    endpointStates.mockReset().mockImplementation(noEndpoints);
    renew.mockReset().mockImplementation(renewed);
    heartbeat.mockReset().mockImplementation(beat);
    now = 1_000;
    http = new GatedPoster();
    dispatcher = build(http);
  });

  afterEach(async () => {
    await dispatcher.stop();
  });

  it('takes new work at once while nothing is queued: every endpoint leased, no wait', () => {
    dispatcher.adopt(jobs('a', 2), lease);
    expect(dispatcher.leaseForNewWork()).toEqual({ owner: 'w1', pendingFor: [], issuedAt: now });
    expect(dispatcher.whenRoomForNewWork()).toBeUndefined();
  });

  it('an endpoint with an attempt running past the horizon gets its new deliveries pending, and its queue does not hold intake up', async () => {
    dispatcher.adopt(jobs('stuck', PER_ENDPOINT + HIGH * 2), lease);
    expect(http.running('https://stuck.example.com/')).toBe(PER_ENDPOINT);
    // Not yet past the horizon: its queue counts, intake waits.
    now += FLOW_HORIZON_MS;
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual([]);
    const room = dispatcher.whenRoomForNewWork();
    expect(room).toBeInstanceOf(Promise);
    now += 1;
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual(['stuck']);
    // The wait ends at its next check (every 5 ms), long before its time limit: no time passes on this clock.
    await room;
    expect(dispatcher.whenRoomForNewWork()).toBeUndefined();
  });

  it('waits while flowing endpoints have the mark queued, and goes on when they are down to half of it', async () => {
    const url = 'https://busy.example.com/';
    dispatcher.adopt(jobs('busy', PER_ENDPOINT + HIGH), lease);
    let resumed = false;
    const room = dispatcher.whenRoomForNewWork();
    expect(room).toBeInstanceOf(Promise);
    void room!.then(() => (resumed = true));
    // Down to one more than half: still waiting.
    for (let i = 0; i < HIGH / 2 - 1; i++) await http.answer(url);
    expect(resumed).toBe(false);
    // The same wait for a second caller.
    expect(dispatcher.whenRoomForNewWork()).toBe(room);
    await http.answer(url);
    await room;
    expect(resumed).toBe(true);
  });

  it('waits one INTAKE_WAIT_MS at most', async () => {
    dispatcher.adopt(jobs('busy', PER_ENDPOINT + HIGH), lease);
    const room = dispatcher.whenRoomForNewWork();
    expect(room).toBeInstanceOf(Promise);
    now += INTAKE_WAIT_MS;
    await room;
  });

  it('an endpoint whose queue would take longer than the horizon at its time per finished attempt is not flowing', async () => {
    const url = 'https://slow.example.com/';
    // With its slots all busy, an attempt finishes every 25 ms (4 slots, 100 ms each).
    const perAttempt = 25;
    const fits = FLOW_HORIZON_MS / perAttempt;
    dispatcher.adopt(jobs('slow', PER_ENDPOINT + fits + 3), lease);
    // Three attempts finish 25 ms apart: two intervals measured, the queue down to `fits`.
    for (let i = 0; i < 3; i++) {
      now += perAttempt;
      await http.answer(url);
    }
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual([]);
    dispatcher.adopt(jobs('slow', 1), lease);
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual(['slow']);
  });

  /** Starts the dispatcher and lets its first claim (for due work anywhere) finish. */
  async function started(): Promise<void> {
    await dispatcher.start();
    await new Promise((r) => setImmediate(r));
    expect(claim).toHaveBeenCalledTimes(1);
    claim.mockClear();
  }

  /** Lets the attempts' records (after their linger) and the claim that follows them finish. */
  async function settled(): Promise<void> {
    for (let waited = 0; record.mock.calls.length === 0; waited++) {
      if (waited > 200) throw new Error('the attempts were never recorded');
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setImmediate(r));
  }

  it('claims due deliveries of an endpoint kept busy by new work, and sends them before the newer ones', async () => {
    const url = 'https://busy.example.com/';
    await started();
    // Three deliveries waiting in the database, made before the new work handed over below.
    const older = jobs('busy', 3);
    const newer = jobs('busy', PER_ENDPOINT + 200);
    dispatcher.adopt(newer, lease);
    claim.mockResolvedValueOnce(older);
    // A wake for due work: the claim asks for this endpoint although 200 are queued for it
    // (as many as the instance's bound on deliveries held leaves room for).
    dispatcher.wake();
    await new Promise((r) => setImmediate(r));
    expect(claim).toHaveBeenLastCalledWith(expect.objectContaining({ endpoints: [{ id: 'busy', room: MAX_IN_FLIGHT * CLAIM_AHEAD - newer.length }] }));
    // The four running go on; the claimed ones start next, in their order, then the new work.
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    expect(http.sent(url).slice(PER_ENDPOINT, PER_ENDPOINT * 2)).toEqual([...older, newer[PER_ENDPOINT]!].map((j) => j.event_id));
  });

  it('new work of an endpoint it did not know does not set off claims; a wake for due work does', async () => {
    const url = 'https://fresh.example.com/';
    await started();
    dispatcher.adopt(jobs('fresh', PER_ENDPOINT * 2), lease);
    for (let i = 0; i < PER_ENDPOINT * 2; i++) await http.answer(url);
    // Recorded, and every slot free again: the moments a claim would top up.
    await settled();
    expect(claim).not.toHaveBeenCalled();
    dispatcher.wake();
    expect(claim).toHaveBeenCalledTimes(1);
  });

  const failed: PostResult = { ok: false, httpStatus: 500, error: 'non_2xx_status', timedOut: false, durationMs: 1, responseBody: 'no' };

  /** The next record comes back only when the returned function is called, with what it is given. */
  function heldRecord(): (endpoints: RecordedEndpoint[]) => void {
    let finish!: (endpoints: RecordedEndpoint[]) => void;
    const answer = new Promise<RecordedEndpoint[]>((resolve) => (finish = resolve));
    record.mockImplementationOnce(() => answer);
    return finish;
  }

  /** Waits (bounded) until `done()`. */
  async function waitUntil(done: () => boolean): Promise<void> {
    for (let waited = 0; !done(); waited++) {
      if (waited > 400) throw new Error('the condition never held');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Waits (bounded) until the record mock has been called `n` times and its answers are taken in. */
  async function recorded(n: number): Promise<void> {
    for (let waited = 0; record.mock.calls.length < n; waited++) {
      if (waited > 400) throw new Error(`only ${record.mock.calls.length} of ${n} records`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setImmediate(r));
  }

  /**
   * Records as the database would for one endpoint that only fails: the count goes up by each
   * batch (a batch may come before all 50 are answered, after its linger); at 50 `atThreshold`
   * says what the endpoint is then.
   */
  function countingRecords(id: string, url: string, atThreshold: Omit<RecordedEndpoint, 'id' | 'url'>): void {
    let failures = 0;
    record.mockImplementation(async (_owner: string, batch: FinishedAttempt[]) => {
      failures += batch.filter((a) => !a.ok).length;
      return [failures >= 50 ? { id, url, ...atThreshold } : { id, url, disabled: false, disabledNow: false, consecutiveFailures: failures }];
    });
  }

  it('starts nothing more at 50 consecutive failures until a record says; disabled, it drops the queue', async () => {
    const url = 'https://failing.example.com/';
    const queued = jobs('failing', 60);
    dispatcher.adopt(queued, lease);
    countingRecords('failing', url, { disabled: true, disabledNow: true, consecutiveFailures: 50 });
    for (let i = 0; i < 50; i++) await http.answer(url, failed);
    // The 50th failure: the three still running go on, nothing new starts.
    expect(http.sent(url)).toHaveLength(53);
    expect(http.running(url)).toBe(3);
    await waitUntil(() => discard.mock.calls.length > 0);
    expect(discard).toHaveBeenCalledWith('w1', queued.slice(53).map((j) => j.id));
    for (let i = 0; i < 3; i++) await http.answer(url, failed);
    expect(http.sent(url)).toHaveLength(53);
  });

  it('at the threshold, a record that finds the endpoint enabled (its count reset meanwhile) lets it go on', async () => {
    const url = 'https://flaky.example.com/';
    dispatcher.adopt(jobs('flaky', 60), lease);
    countingRecords('flaky', url, { disabled: false, disabledNow: false, consecutiveFailures: 0 });
    for (let i = 0; i < 50; i++) await http.answer(url, failed);
    expect(http.sent(url)).toHaveLength(53);
    await waitUntil(() => http.sent(url).length > 53);
    expect(http.sent(url)).toHaveLength(54);
    expect(discard).not.toHaveBeenCalled();
  });

  it('sends the deliveries queued for an endpoint to the URL a record found', async () => {
    const [before, after] = ['https://before.example.com/', 'https://after.example.com/'];
    const queued = jobs('moved', 10).map((j) => ({ ...j, url: before }));
    dispatcher.adopt(queued, lease);
    record.mockImplementationOnce(async () => [view('moved', after, false)]);
    // One answered, and the fifth started, before the record: four running at the old URL.
    await http.answer(before);
    await recorded(1);
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(before);
    for (let i = 0; i < 5; i++) await http.answer(after);
    expect(http.sent(before)).toHaveLength(5);
    expect(http.sent(after)).toEqual(queued.slice(5).map((j) => j.event_id));
  });

  it('drops the queue of an endpoint changed here (disabled or deleted); the running attempts finish', async () => {
    const url = 'https://gone.example.com/';
    const queued = jobs('gone', 10);
    dispatcher.adopt(queued, lease);
    dispatcher.endpointChanged('gone', undefined);
    expect(discard).toHaveBeenCalledWith('w1', queued.slice(PER_ENDPOINT).map((j) => j.id));
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    // Re-enabled (or created again under the same id in a test): new work starts as usual.
    dispatcher.endpointChanged('gone', { url, disabled: false, consecutiveFailures: 0 });
    dispatcher.adopt(jobs('gone', 1), lease);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT + 1);
  });

  it('a change made here while a record ran: the endpoint is read again, and what it is now is followed', async () => {
    const url = 'https://racy.example.com/';
    dispatcher.adopt(jobs('racy', 10), lease);
    const finish = heldRecord();
    endpointStates.mockResolvedValueOnce([view('racy', url, false)]);
    await http.answer(url);
    await recorded(1);
    // Re-enabled through this instance after the record started (and read the endpoint as disabled).
    now += 1;
    dispatcher.endpointChanged('racy', { url, disabled: false, consecutiveFailures: 0 });
    finish([view('racy', url, true)]);
    await new Promise((r) => setImmediate(r));
    expect(endpointStates).toHaveBeenCalledWith(['racy']);
    expect(discard).not.toHaveBeenCalled();
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT * 2 + 1);
  });

  it('a record started after a change made here is the newer view: it is followed', async () => {
    const url = 'https://later.example.com/';
    const queued = jobs('later', 10);
    dispatcher.adopt(queued, lease);
    dispatcher.endpointChanged('later', { url, disabled: false, consecutiveFailures: 0 });
    now += 1;
    record.mockImplementationOnce(async () => [view('later', url, true)]);
    await http.answer(url);
    await recorded(1);
    expect(endpointStates).not.toHaveBeenCalled();
    expect(discard).toHaveBeenCalledWith('w1', queued.slice(PER_ENDPOINT + 1).map((j) => j.id));
  });

  it('a record that read the endpoint as disabled drops what was queued before it, and hands back what came after', async () => {
    const url = 'https://reenabled.example.com/';
    const before = jobs('reenabled', 6);
    dispatcher.adopt(before, lease);
    const finish = heldRecord();
    await http.answer(url);
    await recorded(1);
    // Handed over while the record ran: maybe read after a re-enable through another instance.
    const after = jobs('reenabled', 2);
    dispatcher.adopt(after, lease);
    claim.mockClear();
    finish([view('reenabled', url, true)]);
    await new Promise((r) => setImmediate(r));
    expect(discard).toHaveBeenCalledWith('w1', before.slice(PER_ENDPOINT + 1).map((j) => j.id));
    expect(release).toHaveBeenCalledWith('w1', after.map((j) => j.id));
    // A claim decides (it drops them if the endpoint is still disabled, takes them if not).
    await new Promise((r) => setImmediate(r));
    expect(claim).toHaveBeenCalled();
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT + 1);
  });

  it('held at the threshold, an endpoint re-enabled here goes on at once', async () => {
    const url = 'https://fixed.example.com/';
    dispatcher.adopt(jobs('fixed', 60), lease);
    // The record of the 50 failures is slow to come back.
    const finish = heldRecord();
    for (let i = 0; i < 50; i++) await http.answer(url, failed);
    for (let i = 0; i < 3; i++) await http.answer(url, failed);
    expect(http.sent(url)).toHaveLength(53);
    dispatcher.endpointChanged('fixed', { url, disabled: false, consecutiveFailures: 0 });
    expect(http.sent(url)).toHaveLength(53 + PER_ENDPOINT);
    await recorded(1);
    finish([]);
  });

  it('deliveries read before a delete made here, handed over after it, go back to the database, not out', async () => {
    const url = 'https://late.example.com/';
    dispatcher.endpointChanged('late', undefined);
    const late = jobs('late', 3);
    dispatcher.adopt(late, lease);
    expect(http.sent(url)).toHaveLength(0);
    expect(release).toHaveBeenCalledWith('w1', late.map((j) => j.id));
  });

  it('deliveries read before a URL change made here go to the new URL', async () => {
    const [before, after] = ['https://old.example.com/', 'https://new.example.com/'];
    dispatcher.endpointChanged('moving', { url: after, disabled: false, consecutiveFailures: 0 });
    dispatcher.adopt(jobs('moving', 2).map((j) => ({ ...j, url: before })), lease);
    expect(http.sent(before)).toHaveLength(0);
    expect(http.sent(after)).toHaveLength(2);
  });

  /** Runs one lease renewal now (the timer's work). */
  const renewal = () => (dispatcher as unknown as { lease: { renew(): Promise<void> } }).lease.renew();

  it('starts nothing once its lease may have run out (renewals failing), and goes on when one succeeds', async () => {
    const url = 'https://patient.example.com/';
    await dispatcher.start();
    dispatcher.adopt(jobs('patient', 10), lease);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    // Two thirds of the 30 s lease after the last renewal: another instance may take over at 30 s.
    now += 20_001;
    await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    expect(dispatcher.leaseForNewWork()).toBeUndefined();
    await renewal();
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT + 1);
    expect(dispatcher.leaseForNewWork()?.owner).toBe('w1');
  });

  it('its lease taken over (its row gone): drops what it has not started and goes on under a new name', async () => {
    const url = 'https://taken.example.com/';
    await dispatcher.start();
    dispatcher.adopt(jobs('taken', 10), lease);
    renew.mockResolvedValueOnce(false);
    await renewal();
    expect(heartbeat).toHaveBeenLastCalledWith('w1.1', expect.any(Date));
    expect(dispatcher.leaseForNewWork()?.owner).toBe('w1.1');
    // What ran under the old name is cut short: those deliveries are another instance's now.
    expect(http.running(url)).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    expect(release).not.toHaveBeenCalled();
    // A fan-out leased under the old name, handed over late: not taken (the reaper gives them back).
    dispatcher.adopt(jobs('taken', 2), lease);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    // Under the new name, work flows again.
    dispatcher.adopt(jobs('taken', 1), { owner: 'w1.1', pendingFor: [] });
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT + 1);
  });

  it('cuts attempts in flight short once renewals have failed for five sixths of a lease, and hands them back', async () => {
    const url = 'https://cut.example.com/';
    // A lease of 1.2 s: looked at every 100 ms.
    dispatcher = build(http, { leaseMs: 1_200 });
    renew.mockRejectedValue(new Error('database unreachable'));
    await dispatcher.start();
    const held = jobs('cut', 2);
    dispatcher.adopt(held, lease);
    expect(http.running(url)).toBe(2);
    // Five sixths of the lease after the last renewal was sent (at start): another instance
    // may take these deliveries over at the end of the lease.
    now += 1_000;
    for (let i = 0; i < 100 && http.running(url) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(http.running(url)).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(release.mock.calls.flatMap(([, ids]) => ids).sort()).toEqual(held.map((j) => j.id).sort());
    expect(record).not.toHaveBeenCalled();
  });

  it('a lease that ran out while its renewal waited on the database: the queues go on once it is renewed', async () => {
    const url = 'https://slowdb.example.com/';
    await dispatcher.start();
    dispatcher.adopt(jobs('slowdb', 10), lease);
    let renewed!: (ok: boolean) => void;
    renew.mockImplementationOnce(() => new Promise((resolve) => (renewed = resolve)));
    // The next renewal, a third of the lease later, waits on the database past two thirds of the lease.
    now += 10_000;
    const renewing = renewal();
    now += 10_001;
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT);
    renewed(true);
    await renewing;
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT * 2);
  });

  it('taken over, and registering its new name fails: it starts nothing until that succeeds', async () => {
    await dispatcher.start();
    renew.mockResolvedValueOnce(false);
    heartbeat.mockRejectedValueOnce(new Error('connection lost'));
    await renewal();
    expect(dispatcher.leaseForNewWork()).toBeUndefined();
    dispatcher.adopt(jobs('waiting', 1), { owner: 'w1.1', pendingFor: [] });
    expect(http.sent('https://waiting.example.com/')).toHaveLength(0);
    // 'w1.1' was never registered: the next renewal finds no row, and it goes on as 'w1.2'.
    renew.mockResolvedValueOnce(false);
    await renewal();
    expect(heartbeat).toHaveBeenLastCalledWith('w1.2', expect.any(Date));
    expect(http.sent('https://waiting.example.com/')).toHaveLength(0);
    dispatcher.adopt(jobs('waiting', 1), { owner: 'w1.2', pendingFor: [] });
    expect(http.sent('https://waiting.example.com/')).toHaveLength(1);
  });

  it('attempts made under a name given up are not recorded', async () => {
    const url = 'https://stale.example.com/';
    await dispatcher.start();
    dispatcher.adopt(jobs('stale', 2), lease);
    await http.answer(url);
    renew.mockResolvedValueOnce(false);
    await renewal();
    // Both attempts were made as 'w1': neither is recorded as 'w1.1' (the first was waiting
    // for its linger, the second is cut short by the lease's end).
    expect(http.running(url)).toBe(0);
    dispatcher.adopt(jobs('stale', 1), { owner: 'w1.1', pendingFor: [] });
    await http.answer(url);
    await recorded(1);
    expect(record.mock.calls.map((c) => [c[0], c[1].length])).toEqual([['w1.1', 1]]);
  });

  it('deliveries a fan-out read before a record found the endpoint disabled go back; read after, they are taken', async () => {
    const url = 'https://off.example.com/';
    dispatcher.adopt(jobs('off', 5), lease);
    record.mockImplementationOnce(async () => [{ id: 'off', url, disabled: true, disabledNow: true, consecutiveFailures: 50 }]);
    await http.answer(url);
    await recorded(1);
    // Leased before the record came back: maybe read before the disable.
    const early = jobs('off', 2);
    dispatcher.adopt(early, { owner: 'w1', pendingFor: [], issuedAt: now - 1 });
    expect(release).toHaveBeenCalledWith('w1', early.map((j) => j.id));
    // Leased after it: read after it (a fan-out makes none for a disabled endpoint, so it was re-enabled).
    now += 1;
    dispatcher.adopt(jobs('off', 1), { owner: 'w1', pendingFor: [], issuedAt: now });
    await http.answer(url);
    expect(http.sent(url)).toHaveLength(PER_ENDPOINT + 2);
  });

  it('a claim started after a change made here is not handed back again (no loop after a re-enable elsewhere)', async () => {
    const url = 'https://again.example.com/';
    await started();
    dispatcher.endpointChanged('again', { url, disabled: true, consecutiveFailures: 0 });
    now += 1;
    claim.mockResolvedValueOnce(jobs('again', 2));
    dispatcher.wake();
    await new Promise((r) => setImmediate(r));
    expect(release).not.toHaveBeenCalled();
    expect(http.sent(url)).toHaveLength(2);
  });

  /** Deliveries of an endpoint deleted here, handed over late: their hand-back (release) is reported failed. */
  async function failedHandBack(endpointId: string, n: number): Promise<ClaimedJob[]> {
    await dispatcher.start();
    dispatcher.endpointChanged(endpointId, undefined);
    const late = jobs(endpointId, n);
    release.mockRejectedValueOnce(new Error('connection lost'));
    dispatcher.adopt(late, lease);
    await new Promise((r) => setImmediate(r));
    return late;
  }

  it('a hand-back that fails is tried again at the next renewal', async () => {
    const late = await failedHandBack('back', 2);
    await renewal();
    expect(release.mock.calls.map((c) => c[1])).toEqual([late.map((j) => j.id), late.map((j) => j.id)]);
  });

  it('a delivery held again is not handed back by the retry of a release reported failed', async () => {
    const late = await failedHandBack('again2', 1);
    // The release went through after all: a claim (started after the change) takes the delivery again.
    now += 1;
    claim.mockResolvedValueOnce(late);
    dispatcher.wake();
    await new Promise((r) => setImmediate(r));
    expect(http.sent('https://again2.example.com/')).toHaveLength(1);
    await renewal();
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('held at the threshold when its lease is taken over: under the new name the endpoint starts again', async () => {
    const url = 'https://heldover.example.com/';
    await dispatcher.start();
    // The database does not answer records (it is why the lease runs out).
    let reachable!: () => void;
    const down = new Promise<void>((r) => (reachable = r));
    record.mockImplementation(async () => {
      await down;
      return [];
    });
    dispatcher.adopt(jobs('heldover', 60), lease);
    for (let i = 0; i < 50; i++) await http.answer(url, failed);
    expect(http.sent(url)).toHaveLength(53);
    renew.mockResolvedValueOnce(false);
    await renewal();
    // The three attempts of the old name are cut short; new work under the new name starts.
    expect(http.running(url)).toBe(0);
    dispatcher.adopt(jobs('heldover', 1), { owner: 'w1.1', pendingFor: [] });
    expect(http.sent(url)).toHaveLength(54);
    await http.answer(url, failed);
    reachable();
  });

  it('a change made here while a record re-read another endpoint stands against the record\'s view', async () => {
    const [a, b] = ['https://ra.example.com/', 'https://rb.example.com/'];
    dispatcher.adopt(jobs('ra', 1), lease);
    dispatcher.adopt(jobs('rb', 1), lease);
    const finish = heldRecord();
    let reread!: (endpoints: RecordedEndpoint[]) => void;
    endpointStates.mockImplementationOnce(() => new Promise((resolve) => (reread = resolve)));
    await http.answer(a);
    await http.answer(b);
    await recorded(1);
    // A changed here while the record ran: it will be read again.
    now += 1;
    dispatcher.endpointChanged('ra', { url: a, disabled: false, consecutiveFailures: 0 });
    finish([
      view('ra', a, false),
      view('rb', b, false),
    ]);
    await new Promise((r) => setImmediate(r));
    expect(endpointStates).toHaveBeenCalledWith(['ra']);
    // B disabled here while A is read again: the record's older view of B must not undo it.
    now += 1;
    dispatcher.endpointChanged('rb', { url: b, disabled: true, consecutiveFailures: 0 });
    reread([view('ra', a, false)]);
    await new Promise((r) => setImmediate(r));
    // Read before B's disable, handed over after it: back to the database, not sent.
    const early = jobs('rb', 1);
    dispatcher.adopt(early, { owner: 'w1', pendingFor: [], issuedAt: now - 1 });
    expect(release).toHaveBeenCalledWith('w1', early.map((j) => j.id));
    expect(http.sent(b)).toHaveLength(1);
  });

  it('keeps renewing its lease while a SIGTERM lets attempts finish', async () => {
    const url = 'https://finishing.example.com/';
    const stopping = new Dispatcher(repo, http, box, new RetryPolicy(), new ManualClock(new Date('2026-11-22T10:00:00Z')), createLogger({ service: 'test', level: 'silent' }), {
      owner: 'w2',
      maxInFlight: MAX_IN_FLIGHT,
      perEndpoint: PER_ENDPOINT,
      leaseMs: 300,
      pollIntervalMs: 60_000,
      shutdownGraceMs: 10_000,
      failureThreshold: 50,
    });
    await stopping.start();
    stopping.adopt(jobs('finishing', 1), { owner: 'w2', pendingFor: [] });
    const stopped = stopping.stop();
    renew.mockClear();
    for (let waited = 0; renew.mock.calls.length === 0; waited++) {
      if (waited > 200) throw new Error('no renewal while stopping');
      await new Promise((r) => setTimeout(r, 10));
    }
    await http.answer(url);
    await stopped;
  });

  it('records a batch PostgreSQL refuses (a data exception) again without its response bodies', async () => {
    const url = 'https://odd.example.com/';
    dispatcher.adopt(jobs('odd', 1), lease);
    record.mockRejectedValueOnce(Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' }));
    await http.answer(url, failed);
    await recorded(2);
    const [first, second] = record.mock.calls.map((c) => c[1]);
    expect(first![0]!.responseBody).toBe('no');
    expect(second![0]).toMatchObject({ responseBody: null, httpStatus: 500, ok: false });
  });

  it('never runs more than maxInFlight attempts at once over all endpoints, shares them in turn, and finishes all the work', async () => {
    // WEBHOOK_MAX_IN_FLIGHT's smallest value: three endpoints of 4 slots each could run 12.
    const maxInFlight = 4;
    const ids = ['g1', 'g2', 'g3'];
    const urls = ids.map((id) => `https://${id}.example.com/`);
    const gated = new GatedPoster();
    let peak = 0;
    // Counted as each request starts: the requests then waiting at the receivers, and the dispatcher's own count.
    const counting: Poster = {
      post: (url, body, headers, abort) => {
        const pending = gated.post(url, body, headers, abort);
        peak = Math.max(peak, urls.reduce((n, u) => n + gated.running(u), 0), bounded.inFlight);
        return pending;
      },
    };
    const bounded = build(counting, { maxInFlight });
    const work = ids.map((id) => jobs(id, 20));
    for (const batch of work) bounded.adopt(batch, lease);
    try {
      // Answered one at a time, endpoint by endpoint in turn, until all 60 are done; nothing running with work left is a stall.
      for (let answered = 0, turn = 0; answered < 60; answered++, turn++) {
        const url = [...urls.slice(turn % urls.length), ...urls.slice(0, turn % urls.length)].find((u) => gated.running(u) > 0);
        if (!url) throw new Error(`nothing running after ${answered} of 60 answers`);
        await gated.answer(url);
        // Endpoints waiting for a global slot get the freed ones in turn: none waits for another's queue to run dry.
        if (answered === 6) for (const u of urls) expect(gated.sent(u).length).toBeGreaterThan(0);
      }
      expect(peak).toBeLessThanOrEqual(maxInFlight);
      // The bound was reached: it, not a lack of work, kept the count down.
      expect(peak).toBe(maxInFlight);
      for (const url of urls) expect(gated.sent(url)).toHaveLength(20);
      const recordedIds = () => record.mock.calls.flatMap((c) => c[1].map((a) => a.job.id));
      await waitUntil(() => recordedIds().length >= 60);
      expect(recordedIds().sort((a, b) => a - b)).toEqual(work.flat().map((j) => j.id));
    } finally {
      await bounded.stop();
    }
  });
});
