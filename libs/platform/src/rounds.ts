/**
 * Work done in rounds, one at a time per instance: every `intervalMs`, and soon after a kick.
 * A kick during a round asks for one more round after it (kicks do not pile up); a round that
 * answers true (there is more: a full batch) is followed at once by another. A round that
 * fails goes to `onError`, and the next tick tries again. `stop` ends the ticks and waits for
 * the round under way. The outbox relay and the domains' verification job run this way.
 */
export class Rounds {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly round: () => Promise<boolean>,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
    this.kick();
  }

  /** A round soon: now, or after the one under way. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .then((more) => {
        if (more) this.again = true;
      }, this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
