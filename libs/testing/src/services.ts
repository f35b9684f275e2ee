/** Booting any set of service modules in this process against a test context. */
import { createLogger, Lifecycle, type Clock } from '@mailroom/platform';
import { startService, type AnyServiceModule, type RunningService } from '@mailroom/runtime';

export interface BootedServices {
  life: Lifecycle;
  running: RunningService[];
  stop(): Promise<boolean>;
}

export async function bootServices(modules: AnyServiceModule[], env: Record<string, string>, opts: { clock?: Clock } = {}): Promise<BootedServices> {
  const log = createLogger({ service: 'test', level: env.LOG_LEVEL ?? 'silent' });
  const life = new Lifecycle(log, { stepTimeoutMs: 5_000 });
  const running: RunningService[] = [];
  try {
    for (const module of modules) {
      running.push(await startService(module, { env, life, log, migrate: true, ...(opts.clock ? { clock: opts.clock } : {}) }));
    }
  } catch (err) {
    await life.stop('boot failed');
    throw err;
  }
  return { life, running, stop: () => life.stop('test done') };
}
