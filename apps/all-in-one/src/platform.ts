/**
 * Every service in one process, for development and tests: the same modules the
 * standalone entries run, started in dependency order on one lifecycle (stopped in reverse).
 */
import { authService } from '@mailroom/auth';
import { domainsService } from '@mailroom/domains';
import { adminService } from '@mailroom/admin';
import { gatewayService } from '@mailroom/gateway';
import { mailIngestService } from '@mailroom/mail-ingest';
import { mailSendService } from '@mailroom/mail-send';
import { mailboxService } from '@mailroom/mailbox';
import { metricsService } from '@mailroom/metrics';
import { orgsService } from '@mailroom/orgs';
import { webhooksService } from '@mailroom/webhooks';
import { createLogger, Lifecycle, type Clock, type Env, type Logger } from '@mailroom/platform';
import { provisionStreams, startService, type AnyServiceModule, type RunningService } from '@mailroom/runtime';

/** In start order: a service starts after those it calls at start-up. */
export const SERVICES = {
  orgs: orgsService,
  auth: authService,
  mailbox: mailboxService,
  'mail-ingest': mailIngestService,
  'mail-send': mailSendService,
  webhooks: webhooksService,
  domains: domainsService,
  metrics: metricsService,
  admin: adminService,
  gateway: gatewayService,
} as const satisfies Record<string, AnyServiceModule>;

export type ServiceName = keyof typeof SERVICES;
export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

export interface PlatformOptions {
  env: Env;
  services?: ServiceName[];
  migrate?: boolean;
  log?: Logger;
  clock?: Clock;
}

export interface Platform {
  life: Lifecycle;
  services: Partial<Record<ServiceName, RunningService>>;
  stop(): Promise<boolean>;
}

export async function startPlatform(opts: PlatformOptions): Promise<Platform> {
  const log = opts.log ?? createLogger({ service: 'mailroom', level: opts.env.LOG_LEVEL ?? 'info' });
  const life = new Lifecycle(log);
  const wanted = new Set(opts.services ?? SERVICE_NAMES);
  const services: Platform['services'] = {};
  try {
    if (opts.migrate) await provisionStreams(opts.env, log);
    for (const name of SERVICE_NAMES) {
      if (!wanted.has(name)) continue;
      services[name] = await startService(SERVICES[name], {
        env: opts.env,
        life,
        log,
        migrate: opts.migrate ?? false,
        ...(opts.clock ? { clock: opts.clock } : {}),
      });
    }
  } catch (err) {
    await life.stop('start-up failed');
    throw err;
  }
  return { life, services, stop: () => life.stop('stop') };
}
