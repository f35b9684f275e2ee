/**
 * Ordered, bounded shutdown. Resources are registered in start order and stopped in
 * reverse: listeners first, then in-flight work, subscriptions, the bus, the database,
 * telemetry. Each stop has its own bound; a stop that hangs is logged and skipped.
 */
import type { Logger } from 'pino';

interface Entry {
  name: string;
  stop: () => Promise<void> | void;
}

export interface LifecycleOptions {
  /** Bound for each resource's stop. */
  stepTimeoutMs?: number;
}

export class Lifecycle {
  private readonly entries: Entry[] = [];
  private stopping: Promise<boolean> | undefined;
  private readonly stepTimeoutMs: number;

  constructor(
    private readonly log: Logger,
    opts: LifecycleOptions = {},
  ) {
    this.stepTimeoutMs = opts.stepTimeoutMs ?? 10_000;
  }

  /** Registers `resource` and returns it, so start-up reads as a list of assignments. */
  add<T>(name: string, resource: T, stop: (r: T) => Promise<unknown> | unknown): T {
    this.entries.push({ name, stop: async () => void (await stop(resource)) });
    return resource;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Stops everything once; resolves true when every step finished within its bound. */
  stop(reason = 'stop'): Promise<boolean> {
    this.stopping ??= this.runStop(reason);
    return this.stopping;
  }

  private async runStop(reason: string): Promise<boolean> {
    this.log.info({ reason }, 'shutting down');
    let clean = true;
    for (const entry of [...this.entries].reverse()) {
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        const outcome = await Promise.race([
          Promise.resolve()
            .then(entry.stop)
            .then(() => 'done' as const),
          new Promise<'timeout'>((resolve) => {
            timer = setTimeout(() => resolve('timeout'), this.stepTimeoutMs);
          }),
        ]);
        if (outcome === 'timeout') {
          clean = false;
          this.log.error({ resource: entry.name, timeout_ms: this.stepTimeoutMs }, 'stop timed out; moving on');
        } else {
          this.log.debug({ resource: entry.name, ms: Date.now() - started }, 'stopped');
        }
      } catch (err) {
        clean = false;
        this.log.error({ resource: entry.name, err }, 'stop failed; moving on');
      } finally {
        clearTimeout(timer);
      }
    }
    this.log.info({ clean }, 'shut down');
    return clean;
  }

  /**
   * SIGTERM/SIGINT stop the process in order; a second signal exits at once. With
   * `startedUp`, a signal during start-up stops once it has settled, so what start-up
   * registers after the signal is stopped too (a lease handed back, not left to run out).
   */
  trapSignals(exit: (code: number) => void = (code) => process.exit(code), startedUp?: Promise<unknown>): void {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        this.log.warn({ signal }, 'second signal: exiting now');
        exit(1);
        return;
      }
      signalled = true;
      void Promise.resolve(startedUp)
        .catch(() => {})
        .then(() => this.stop(signal))
        .then((clean) => exit(clean ? 0 : 1));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
}
