/**
 * The all-in-one process's commands: start (default); migrate (database schemas and the
 * bus's streams and buckets); bus-credentials (a new NATS operator, its server include file
 * and every identity's credentials, or one identity's reissued: --help).
 */
import { ensureDatabaseExists } from '@mailroom/db';
import { createLogger, runChecks, startHealthServer, startMetrics } from '@mailroom/platform';
import { migrateAll, processTelemetry, provisionStreams } from '@mailroom/runtime';
import { busCredentials } from './bus-credentials';
import { SERVICES, startPlatform } from './platform';

const COMMANDS = ['start', 'migrate', 'bus-credentials'];

export async function cli(args: string[], env = process.env): Promise<void> {
  const log = createLogger({ service: 'mailroom', level: env.LOG_LEVEL ?? 'info' });
  const command = args[0] ?? 'start';
  if (!COMMANDS.includes(command)) {
    log.fatal({ command }, `unknown command; use ${COMMANDS.join(', ')}`);
    process.exit(2);
  }
  if (command === 'bus-credentials') return busCredentials(args.slice(1));
  try {
    // Development convenience: the database is created on first run.
    if (env.MAILROOM_ENV !== 'production') {
      const url = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/mailroom';
      if (await ensureDatabaseExists(url)) log.info({ database: new URL(url).pathname.slice(1) }, 'database created');
    }
    if (command === 'migrate') {
      await migrateAll(Object.values(SERVICES), env, log);
      await provisionStreams(env, log);
      return;
    }
    // Before the modules start: their instruments are made from the provider as they start (one for all, each measurement naming its module).
    const metrics = startMetrics('mailroom', env);
    const platform = await startPlatform({ env, log, migrate: env.MIGRATE_ON_START !== 'false' });
    if (metrics.readers.length) platform.life.add('metrics', metrics, (m) => m.shutdown());
    const telemetry = processTelemetry('mailroom', env, log);
    if (telemetry.enabled) platform.life.add('telemetry', telemetry, (t) => t.shutdown());
    const checks = Object.assign({}, ...Object.values(platform.services).map((s) => s.checks));
    const healthPort = Number(env.HEALTH_PORT ?? 0);
    if (healthPort) {
      const health = await startHealthServer(healthPort, checks);
      platform.life.add('health', health, (h) => h.close());
    }
    const report = await runChecks(checks);
    const url = platform.services.gateway?.endpoints.http;
    log.info({ url, readiness: report.status }, `Mailroom is running: API at ${url}/api/v1 (OpenAPI: ${url}/api/v1/openapi.json)`);
    platform.life.trapSignals();
  } catch (err) {
    log.fatal({ err }, `${command} failed`);
    process.exit(1);
  }
}
