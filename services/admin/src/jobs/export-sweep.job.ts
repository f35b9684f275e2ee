/**
 * The exports' purge as a periodic job (EXPORT_SWEEP_INTERVAL_SECONDS, and once at start):
 * archives deleted 7 days after their export finished, exports whose instance died (heartbeat
 * older than EXPORT_STALE_AFTER_SECONDS) failed. Runs do not overlap within an instance;
 * instances may run it at once, which is safe (each step can be repeated).
 */
import type { Logger } from '@mailroom/platform';
import type { Exports } from '../domain/exports';

export class ExportSweepJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly exports: Pick<Exports, 'sweep'>,
    private readonly intervalMs: number,
    private readonly staleMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.run();
    this.timer = setInterval(() => this.run(), this.intervalMs).unref();
  }

  /** Lets a run under way finish. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private run(): void {
    if (this.running) return;
    this.running = this.exports
      .sweep(this.staleMs)
      .then(
        (r) => {
          if (r.interrupted.length > 0) this.log.warn({ exports: r.interrupted }, 'exports interrupted (their instance stopped) marked failed');
          if (r.expired > 0) this.log.info({ expired: r.expired }, 'expired exports deleted');
        },
        (err: unknown) => this.log.error({ err }, 'export purge failed; the next run tries again'),
      )
      .finally(() => {
        this.running = undefined;
      });
  }
}
