import { ManualClock } from '@mailroom/platform';
import type { ClaimedJob, DeliveryRepository, StoredEvent } from '../repo/delivery.repository';
import { FAN_OUT_SPACING_MS, FanOutBatcher, type NewWorkSink } from './events.consumer';

function event(id: string): StoredEvent {
  return { id, org_id: 'org_1', env_id: 'env_1', type: 'message.received', body: Buffer.from(`{"id":"${id}"}`), occurred_at: new Date('2026-11-22T10:00:00Z'), inbox_id: null };
}

/** A repository whose fan-outs the test lets finish one at a time, noting the events of each. */
class GatedFanOut {
  readonly writes: string[][] = [];
  private readonly gates: (() => void)[] = [];

  readonly repo = {
    fanOut: (events: StoredEvent[]) => {
      this.writes.push(events.map((e) => e.id));
      return new Promise<{ created: number; claimed: ClaimedJob[]; pendingEndpoints: string[] }>((resolve) => this.gates.push(() => resolve({ created: 0, claimed: [], pendingEndpoints: [] })));
    },
  } as unknown as DeliveryRepository;

  /** Lets the oldest write commit. */
  finish(): void {
    const gate = this.gates.shift();
    if (!gate) throw new Error('no write is running');
    gate();
  }

  async untilWrites(n: number): Promise<void> {
    for (let waited = 0; this.writes.length < n; waited++) {
      if (waited > 400) throw new Error(`${this.writes.length} writes, expected ${n}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

const sink: NewWorkSink = { whenRoomForNewWork: () => undefined, leaseForNewWork: () => undefined, adopt: () => {}, createdPending: () => {} };

describe('FanOutBatcher', () => {
  let now: number;
  let db: GatedFanOut;
  let batcher: FanOutBatcher;

  beforeEach(() => {
    now = 1_000;
    db = new GatedFanOut();
    batcher = new FanOutBatcher({ deliveries: db.repo, clock: new ManualClock(new Date('2026-11-22T10:00:00Z')), maxAttempts: 10, dispatcher: sink, monotonic: () => now });
  });

  it('writes a lone event at once, and acks it once its write committed', async () => {
    let done = false;
    const added = batcher.add(event('evt_a')).then(() => (done = true));
    expect(db.writes).toEqual([['evt_a']]);
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    db.finish();
    await added;
  });

  it('events that come just after a write started wait out the spacing and go in one write', async () => {
    const a = batcher.add(event('evt_a'));
    const b = batcher.add(event('evt_b'));
    db.finish();
    // Written right after the first: the same monotonic instant, so within the spacing.
    const c = batcher.add(event('evt_c'));
    await a;
    await db.untilWrites(2);
    expect(db.writes).toEqual([['evt_a'], ['evt_b', 'evt_c']]);
    db.finish();
    await Promise.all([b, c]);
  });

  it('an event that comes after the spacing has passed is written at once', async () => {
    const a = batcher.add(event('evt_a'));
    db.finish();
    await a;
    now += FAN_OUT_SPACING_MS;
    void batcher.add(event('evt_b'));
    expect(db.writes).toEqual([['evt_a'], ['evt_b']]);
    db.finish();
  });

  it('a failed write rejects its own events only', async () => {
    const failing = { fanOut: jest.fn().mockRejectedValueOnce(new Error('db down')).mockResolvedValue({ created: 1, claimed: [], pendingEndpoints: [] }) } as unknown as DeliveryRepository;
    batcher = new FanOutBatcher({ deliveries: failing, clock: new ManualClock(new Date('2026-11-22T10:00:00Z')), maxAttempts: 10, dispatcher: sink, monotonic: () => now });
    const a = batcher.add(event('evt_a'));
    await expect(a).rejects.toThrow('db down');
    now += FAN_OUT_SPACING_MS;
    await expect(batcher.add(event('evt_b'))).resolves.toBe(1);
  });
});
