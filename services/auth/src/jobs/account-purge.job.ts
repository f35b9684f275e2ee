/**
 * The purge as a periodic job of the auth service: every ACCOUNT_PURGE_INTERVAL_SECONDS (0:
 * never; operators then run `node services/auth/dist/cli.js purge-deleted`), and once a minute
 * after start, so instances restarted more often than the interval purge too. Runs do not
 * overlap within an instance; instances may run it at once, which is safe (every step of an
 * account's purge can be repeated).
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { AccountPurge } from '../domain/account-purge';

const FIRST_RUN_MS = 60_000;

export class AccountPurgeJob {
  private readonly timers: NodeJS.Timeout[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly purge: Pick<AccountPurge, 'purge'>,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timers.push(setTimeout(() => this.run(), Math.min(this.intervalMs, FIRST_RUN_MS)).unref());
    this.timers.push(setInterval(() => this.run(), this.intervalMs).unref());
  }

  /** Lets a run under way finish. */
  async stop(): Promise<void> {
    for (const t of this.timers.splice(0)) clearTimeout(t);
    await this.running;
  }

  private run(): void {
    if (this.running) return;
    this.running = this.purge
      .purge(this.clock.now())
      .then(
        (result) => {
          if (result.accounts > 0 || result.failed > 0) this.log.info(result, 'deleted accounts purged');
        },
        (err: unknown) => this.log.error({ err }, 'account purge failed; the next run tries again'),
      )
      .finally(() => {
        this.running = undefined;
      });
  }
}
