/**
 * Work done after the answer was given, so the answer cannot tell anything by its timing
 * (a password reset request: whether the address has an account). A few items at a time;
 * beyond a bound, new items are dropped (reported to `onDropped`) rather than queued
 * without end.
 */
export interface AfterAnswerOptions {
  concurrency: number;
  maxQueued: number;
  onError(err: unknown): void;
  onDropped(): void;
}

export class AfterAnswer<T> {
  private readonly queued: T[] = [];
  private readonly running = new Set<Promise<void>>();
  private scheduled = false;

  constructor(
    private readonly work: (item: T) => Promise<void>,
    private readonly opts: AfterAnswerOptions,
  ) {}

  /** Returns at once; nothing of the work starts before the current turn of the event loop (the answer) is over. */
  add(item: T): void {
    if (this.queued.length >= this.opts.maxQueued) {
      this.opts.onDropped();
      return;
    }
    this.queued.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Resolves once nothing is queued or running (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.scheduled || this.running.size > 0) {
      if (this.running.size > 0) await Promise.all([...this.running]);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private pump(): void {
    while (this.running.size < this.opts.concurrency && this.queued.length > 0) {
      const item = this.queued.shift()!;
      const run: Promise<void> = this.work(item)
        .catch((err: unknown) => this.opts.onError(err))
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
