/**
 * Records finished attempts in batches: at once when FLUSH_BATCH are waiting (or when
 * draining), else after FLUSH_LINGER_MS, so one record (one statement) is shared by many
 * attempts under load and a lone attempt waits 20 ms at most. Nothing waits for a record
 * but the attempt's row: the next request to the endpoint has already started. (An attempt
 * not yet recorded when the process dies is sent again: at-least-once.) A record that fails
 * is tried again, with a growing pause, until it goes through or its attempts are no longer
 * this instance's to record.
 */
import type { Logger } from '@mailroom/platform';
import type { FinishedAttempt } from '../repo/delivery.repository';

/** A record starts at once when this many attempts wait; fewer wait FLUSH_LINGER_MS for company. */
export const FLUSH_BATCH = 128;
export const FLUSH_LINGER_MS = 20;
/** Tries of a failing record while draining, before its attempts are left unrecorded (and sent again). */
const DRAIN_TRIES = 3;

export interface RecordSink {
  /** Writes one batch (one statement) and follows what it says; throws if it did not commit. */
  write(batch: FinishedAttempt[]): Promise<void>;
  /** The lease generation now: a batch that fails after it changed is not recorded again (lease.ts). */
  generation(): number;
  /** The batch's deliveries are no longer held here: recorded (`recorded`), or given up. */
  settled(batch: FinishedAttempt[], recorded: boolean): void;
}

/** A PostgreSQL data exception (SQLSTATE class 22): a value refused, whatever the retry. */
function isDataException(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && err.code.startsWith('22');
}

export class AttemptRecorder {
  private finished: FinishedAttempt[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining = false;

  constructor(
    private readonly sink: RecordSink,
    private readonly log: Logger,
  ) {}

  add(attempt: FinishedAttempt): void {
    this.finished.push(attempt);
    this.schedule();
  }

  /** Finished here and not yet recorded, oldest first. */
  get waiting(): readonly FinishedAttempt[] {
    return this.finished;
  }

  /** Takes every waiting attempt out, unrecorded (the lease they were made under is gone: lease.ts). */
  dropAll(): FinishedAttempt[] {
    const dropped = this.finished;
    this.finished = [];
    return dropped;
  }

  /** Records everything waiting, now, and what finishes meanwhile. */
  async drain(): Promise<void> {
    this.draining = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
    await this.flushing;
  }

  private schedule(): void {
    if (this.flushing || this.finished.length === 0) return;
    if (this.finished.length >= FLUSH_BATCH || this.draining) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.start();
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        if (!this.flushing && this.finished.length) this.start();
      }, FLUSH_LINGER_MS);
    }
  }

  private start(): void {
    this.flushing = this.loop().finally(() => {
      this.flushing = undefined;
      if (!this.draining) this.schedule();
    });
  }

  /** Writes batches while full ones are waiting (all of them when draining). */
  private async loop(): Promise<void> {
    let failures = 0;
    do {
      const batch = this.finished;
      this.finished = [];
      const generation = this.sink.generation();
      try {
        await this.sink.write(batch);
        failures = 0;
      } catch (err) {
        failures++;
        this.log.warn({ err, attempts: batch.length }, 'recording attempts failed; retrying');
        if (generation !== this.sink.generation()) {
          // Made under a name given up since: not recorded at all.
          this.sink.settled(batch, false);
        } else {
          // A value PostgreSQL refuses would fail the batch forever, and every record after it:
          // the receivers' response bodies are the only text from outside, so they go.
          const refused = isDataException(err) && batch.some((a) => a.responseBody !== null);
          this.finished = [...(refused ? batch.map((a) => ({ ...a, responseBody: null })) : batch), ...this.finished];
        }
        if (this.draining && failures >= DRAIN_TRIES) return;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** failures)));
        continue;
      }
      this.sink.settled(batch, true);
    } while (this.finished.length >= FLUSH_BATCH || (this.draining && this.finished.length));
  }
}
