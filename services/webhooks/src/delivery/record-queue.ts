/**
 * Finished attempts waiting for their record, written in batches: at once when
 * BATCH wait (or when draining at shutdown), else LINGER_MS after the first, so one record
 * is shared by many attempts under load and a lone attempt waits 20 ms at most. Nothing
 * waits for a record but the attempt's row: the next request to the endpoint has already
 * started. A failed record is tried again with backoff, ahead of what came after; a batch
 * PostgreSQL refuses as data (SQLSTATE class 22) is tried again without its response
 * bodies, the only text from outside, rather than forever. (An attempt not yet recorded when
 * the process dies is sent again: at-least-once.)
 */
import type { Logger } from '@mailroom/platform';
import type { FinishedAttempt } from '../repo/delivery.repository';

export const BATCH = 128;
export const LINGER_MS = 20;
/** Tries of a failing batch while draining, before it is left to the lease (sent again elsewhere). */
const DRAIN_TRIES = 3;

/** A PostgreSQL data exception (SQLSTATE class 22): a value refused, whatever the retry. */
function isDataException(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && err.code.startsWith('22');
}

export class RecordQueue {
  private waiting: FinishedAttempt[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining = false;
  /** Writes failed in a row, over loops: the back-off and the warnings follow it. */
  private failures = 0;

  constructor(
    private readonly d: {
      /** Records a batch. */
      write(batch: FinishedAttempt[]): Promise<void>;
      /** Recorded, or dropped: these deliveries are no longer held. */
      done(batch: FinishedAttempt[]): void;
      /** The lease's generation now: a batch made under an older one is dropped, never recorded. */
      generation(): number;
      log: Logger;
    },
  ) {}

  /** What waits for a record, oldest first. */
  get pending(): readonly FinishedAttempt[] {
    return this.waiting;
  }

  add(attempt: FinishedAttempt): void {
    this.waiting.push(attempt);
    this.schedule();
  }

  /** Takes out everything waiting (the lease was lost: none of it is to be recorded). */
  drop(): FinishedAttempt[] {
    const dropped = this.waiting;
    this.waiting = [];
    return dropped;
  }

  /** Writes everything waiting, now and whatever its size (shutdown). */
  async drain(): Promise<void> {
    this.draining = true;
    // A drain gets its own DRAIN_TRIES, whatever failed before it.
    this.failures = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
    await this.writing;
  }

  private schedule(): void {
    if (this.writing || this.waiting.length === 0) return;
    if (this.waiting.length >= BATCH || this.draining) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.start();
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        if (!this.writing && this.waiting.length) this.start();
      }, LINGER_MS);
    }
  }

  private start(): void {
    this.writing = this.loop().finally(() => {
      this.writing = undefined;
      if (!this.draining) this.schedule();
    });
  }

  /** Writes batches while full ones are waiting (all of them when draining). */
  private async loop(): Promise<void> {
    do {
      const batch = this.waiting;
      this.waiting = [];
      const generation = this.d.generation();
      try {
        await this.d.write(batch);
        this.failures = 0;
      } catch (err) {
        // Counted across loops (a small batch ends its loop and the next one starts anew): the
        // back-off grows through an outage, and the warning is said on the first and every 30th.
        const failures = ++this.failures;
        if (failures === 1 || failures % 30 === 0) this.d.log.warn({ err, attempts: batch.length, failures }, 'recording attempts failed; retrying');
        const refused = isDataException(err) && batch.some((a) => a.responseBody !== null);
        if (generation !== this.d.generation()) this.d.done(batch);
        else this.waiting = [...(refused ? batch.map((a) => ({ ...a, responseBody: null })) : batch), ...this.waiting];
        if (this.draining && failures >= DRAIN_TRIES) return;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** failures)));
        continue;
      }
      this.d.done(batch);
    } while (this.waiting.length >= BATCH || (this.draining && this.waiting.length));
  }
}
