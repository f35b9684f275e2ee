/**
 * `metrics--rollup`: the durable consumer of every public event (`events.>`). Messages that
 * arrive while a write runs go together into the next one (group commit: one transaction
 * for many events under load, a lone event written at once); each is acked only after the
 * transaction that counted it (or found it counted) committed. A failed write naks them:
 * they come back, and the event ids written with the counts keep them from counting twice.
 */
import type { ConsumerName, EventEnvelope } from '@mailroom/contracts';
import { runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { Rollups } from '../domain/rollups';

export const ROLLUP_CONSUMER: ConsumerName = 'metrics--rollup';
/** Events written in one transaction at most. */
const MAX_BATCH = 500;

export class RollupBatcher {
  private pending: { event: EventEnvelope; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  constructor(private readonly rollups: Pick<Rollups, 'record'>) {}

  add(event: EventEnvelope): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ event, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        void this.write();
      }
    });
  }

  /** Writes batches until nothing is pending; never rejects (each batch settles its own). */
  private async write(): Promise<void> {
    try {
      while (this.pending.length) {
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          await this.rollups.record(batch.map((b) => b.event));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

export function runRollupConsumer(bus: Bus, rollups: Rollups, opts: { concurrency: number }): Promise<RunningConsumer> {
  const batcher = new RollupBatcher(rollups);
  return runConsumer(bus, {
    subject: 'events.>',
    durable: ROLLUP_CONSUMER,
    filterSubject: 'events.>',
    // Handlers wait for their batch: the concurrency is how many events one write can take.
    concurrency: opts.concurrency,
    ackWaitMs: 10_000,
    handler: async (event) => {
      await batcher.add(event);
      return 'ack';
    },
  });
}
