/**
 * The all-in-one process's commands: start (default); migrate (database schemas and the
 * bus's streams and buckets); bus-credentials (a new NATS operator, its server include file
 * and every identity's credentials, or one identity's reissued: --help).
 */
import { ensureDatabaseExists } from '@mailroom/db';
import { BUS_IDENTITIES, type BusIdentity } from '@mailroom/contracts';
import { CredentialsExist, reissueIdentity, writeBusCredentials } from '@mailroom/messaging';
import { createLogger, runChecks, startHealthServer } from '@mailroom/platform';
import { migrateAll, processTelemetry, provisionStreams } from '@mailroom/runtime';
import { SERVICES, startPlatform } from './platform';

const COMMANDS = ['start', 'migrate', 'bus-credentials'];

const BUS_USAGE = `usage: bus-credentials <dir> [--namespace <ns>] [--force]
       bus-credentials <dir> --reissue <identity> [--namespace <ns>]
  Writes a new NATS operator into <dir>: nats-auth.conf (include it in nats-server's
  configuration), operator.nk, system.nk, account.nk and bus-master.key (keep them offline),
  one <identity>.creds, <identity>.seal-key and <identity>.subject-keys per identity
  (${BUS_IDENTITIES.join(', ')}), and seal-master.key. Each service gets its three files, the
  gateway seal-master.key too (NATS_CREDENTIALS_DIR).
  --namespace  the deployment's BUS_NAMESPACE, when it has one
  --force      replace existing credentials (every service then needs its new file)
  --reissue    a new credential for one identity from the kept keys; the old one is revoked
               in a new nats-auth.conf once nats-server reloads it (kill -HUP)
`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function busCredentials(args: string[]): Promise<void> {
  const dir = args[0];
  if (!dir || dir.startsWith('--') || args.includes('--help')) {
    process.stderr.write(BUS_USAGE);
    process.exit(dir === '--help' || args.includes('--help') ? 0 : 2);
  }
  const namespace = option(args, '--namespace') ?? '';
  const reissue = option(args, '--reissue');
  try {
    if (reissue !== undefined) {
      if (!(BUS_IDENTITIES as readonly string[]).includes(reissue)) throw new UsageError(`--reissue takes one of ${BUS_IDENTITIES.join(', ')}`);
      const files = await reissueIdentity(dir, reissue as BusIdentity, { namespace });
      process.stdout.write(`wrote ${files.join(', ')} in ${dir}: give ${reissue} its new credential, put the new nats-auth.conf where nats-server reads it and reload it (kill -HUP) to revoke the old one\n`);
      return;
    }
    const files = await writeBusCredentials(dir, { namespace, force: args.includes('--force') });
    process.stdout.write(`wrote ${files.length} files to ${dir}: include nats-auth.conf in nats-server's configuration; give each service its <name>.creds, <name>.seal-key and <name>.subject-keys, and the gateway seal-master.key too (NATS_CREDENTIALS_DIR); keep operator.nk, system.nk, account.nk and bus-master.key offline\n`);
  } catch (err) {
    if (!(err instanceof CredentialsExist || err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  }
}

class UsageError extends Error {}

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
    const platform = await startPlatform({ env, log, migrate: env.MIGRATE_ON_START !== 'false' });
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
