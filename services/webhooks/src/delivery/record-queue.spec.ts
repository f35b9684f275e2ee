import { createLogger } from '@mailroom/platform';
import type { ClaimedJob, FinishedAttempt } from '../repo/delivery.repository';
import { BATCH, LINGER_MS, RecordQueue } from './record-queue';

let n = 0;
const attempt = (responseBody: string | null = null): FinishedAttempt => ({
  attemptId: `wdl_${++n}`,
  job: { id: n, endpoint_id: 'whe_1' } as ClaimedJob,
  attempt: 1,
  trigger: 'scheduled',
  ok: true,
  httpStatus: 200,
  error: null,
  responseBody,
  durationMs: 1,
  at: new Date(),
  retryAt: null,
});

function queue(write: (batch: FinishedAttempt[]) => Promise<void>) {
  const written: FinishedAttempt[][] = [];
  const done: FinishedAttempt[][] = [];
  const q = new RecordQueue({
    write: async (batch) => {
      await write(batch);
      written.push(batch);
    },
    done: (batch) => void done.push(batch),
    generation: () => 0,
    log: createLogger({ service: 'test', level: 'silent' }),
  });
  return { q, written, done };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('RecordQueue', () => {
  it('writes a full batch at once, and fewer after the linger', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const { q, written } = queue(async () => {});
      for (let i = 0; i < BATCH; i++) q.add(attempt());
      await tick();
      expect(written.map((b) => b.length)).toEqual([BATCH]);
      q.add(attempt());
      await tick();
      expect(written).toHaveLength(1);
      jest.advanceTimersByTime(LINGER_MS);
      await tick();
      expect(written.map((b) => b.length)).toEqual([BATCH, 1]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('drains whatever waits, at once', async () => {
    const { q, written, done } = queue(async () => {});
    q.add(attempt());
    q.add(attempt());
    await q.drain();
    expect(written.map((b) => b.length)).toEqual([2]);
    expect(done).toEqual(written);
  });

  it('a batch PostgreSQL refuses as data is written again without its response bodies', async () => {
    let first = true;
    const { q, written } = queue(async () => {
      if (!first) return;
      first = false;
      throw Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    });
    q.add(attempt('\u0000 odd'));
    await q.drain();
    expect(written).toHaveLength(1);
    expect(written[0]![0]!.responseBody).toBeNull();
  });

  it('drop takes out what waits: nothing of it is written', async () => {
    const { q, written } = queue(async () => {});
    q.add(attempt());
    expect(q.drop()).toHaveLength(1);
    await q.drain();
    expect(written).toEqual([]);
  });
});
