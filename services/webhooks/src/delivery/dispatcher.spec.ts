import { randomBytes } from 'node:crypto';
import { createLogger, ManualClock, SecretBox } from '@mailroom/platform';
import { RetryPolicy } from '../domain/retry-policy';
import type { ClaimedJob, DeliveryRepository } from '../repo/delivery.repository';
import { Dispatcher, FLOW_HORIZON_MS, INTAKE_BACKLOG_PER_SLOT, INTAKE_WAIT_MS, type Poster } from './dispatcher';
import type { PostResult } from './http-client';

const MAX_IN_FLIGHT = 16;
const PER_ENDPOINT = 4;
const HIGH = MAX_IN_FLIGHT * INTAKE_BACKLOG_PER_SLOT;
const box = new SecretBox(randomBytes(32).toString('base64'));

/** A receiver per URL whose answers the test hands out one at a time. */
class GatedPoster implements Poster {
  private readonly waiting = new Map<string, ((r: PostResult) => void)[]>();

  post(url: string, _body: Buffer, _headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult> {
    return new Promise((resolve) => {
      const list = this.waiting.get(url) ?? [];
      list.push(resolve);
      this.waiting.set(url, list);
      abort?.addEventListener('abort', () => resolve({ ok: false, httpStatus: 0, error: 'aborted', timedOut: false, durationMs: 0 }), { once: true });
    });
  }

  running(url: string): number {
    return this.waiting.get(url)?.length ?? 0;
  }

  /** Answers the oldest request to `url` with 200; resolves once the dispatcher has moved on. */
  async answer(url: string): Promise<void> {
    const resolve = this.waiting.get(url)?.shift();
    if (!resolve) throw new Error(`no request to ${url} is waiting`);
    resolve({ ok: true, httpStatus: 200, timedOut: false, durationMs: 1 });
    await new Promise((r) => setImmediate(r));
  }
}

const repo = {
  record: async () => [],
  release: async () => {},
  retire: async () => {},
  claim: async () => [],
  heartbeat: async () => {},
  reapExpired: async () => 0,
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
    body: Buffer.from('{}'),
    url: `https://${endpointId}.example.com/`,
    secret_sealed: box.seal('whsec_test', endpointId),
  }));
}

describe('Dispatcher intake', () => {
  let now: number;
  let http: GatedPoster;
  let dispatcher: Dispatcher;

  beforeEach(() => {
    now = 1_000;
    http = new GatedPoster();
    dispatcher = new Dispatcher(repo, http, box, new RetryPolicy(), new ManualClock(new Date('2026-11-22T10:00:00Z')), createLogger({ service: 'test', level: 'silent' }), {
      owner: 'w1',
      maxInFlight: MAX_IN_FLIGHT,
      perEndpoint: PER_ENDPOINT,
      leaseMs: 30_000,
      pollIntervalMs: 60_000,
      shutdownGraceMs: 0,
      failureThreshold: 50,
      monotonic: () => now,
    });
  });

  afterEach(async () => {
    await dispatcher.stop();
  });

  it('takes new work at once while nothing is queued: every endpoint leased, no wait', () => {
    dispatcher.adopt(jobs('a', 2));
    expect(dispatcher.leaseForNewWork()).toEqual({ owner: 'w1', pendingFor: [] });
    expect(dispatcher.whenRoomForNewWork()).toBeUndefined();
  });

  it('an endpoint with an attempt running past the horizon gets its new deliveries pending, and its queue does not hold intake up', async () => {
    dispatcher.adopt(jobs('stuck', PER_ENDPOINT + HIGH * 2));
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
    dispatcher.adopt(jobs('busy', PER_ENDPOINT + HIGH));
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
    dispatcher.adopt(jobs('busy', PER_ENDPOINT + HIGH));
    const room = dispatcher.whenRoomForNewWork();
    expect(room).toBeInstanceOf(Promise);
    now += INTAKE_WAIT_MS;
    await room;
  });

  it('an endpoint whose queue would take longer than the horizon at its average attempt time is not flowing', async () => {
    const url = 'https://slow.example.com/';
    const perAttempt = 100;
    // Queue that takes exactly the horizon at 100 ms per attempt and 4 at a time, plus the 4 running and the 4 to answer.
    const fits = (FLOW_HORIZON_MS * PER_ENDPOINT) / perAttempt;
    dispatcher.adopt(jobs('slow', PER_ENDPOINT * 2 + fits));
    now += perAttempt;
    for (let i = 0; i < PER_ENDPOINT; i++) await http.answer(url);
    // The first four took 100 ms each, the next four just started, `fits` are queued: exactly at the horizon.
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual([]);
    dispatcher.adopt(jobs('slow', 1));
    expect(dispatcher.leaseForNewWork()?.pendingFor).toEqual(['slow']);
  });
});
