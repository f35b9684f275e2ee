/** Booting services: alone in their own process, or several in one. */
import { createDb, createPool, migrate, pingDb, type Kysely } from '@mailroom/db';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { answerDiscovery, connectBus, contextSeal, provisionBus, readBusIdentity, type BusOptions } from '@mailroom/messaging';
import {
  checkBusSettings,
  ConfigError,
  createLogger,
  Lifecycle,
  natsTlsFiles,
  parseConfig,
  startHealthServer,
  startMetrics,
  startedTelemetry,
  inModule,
  startTelemetry,
  systemClock,
  type Clock,
  type Env,
  type HealthChecks,
  type Logger,
  type Telemetry,
} from '@mailroom/platform';
import { observePool } from './pool-metrics';
import { replicationOf } from './replication';
import { baseConfigSchema, type AnyServiceModule, type BaseConfig } from './service-module';

/** The version every service reports: the platform's (one version for the monorepo's packages). */
const VERSION = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'))).version;

export interface StartOptions {
  env: Env;
  /** Shared lifecycle: services started later stop first. */
  life: Lifecycle;
  log?: Logger;
  clock?: Clock;
  /** Run the module's migrations before starting it. */
  migrate?: boolean;
}

export interface RunningService {
  name: string;
  config: BaseConfig;
  checks: HealthChecks;
  endpoints: Record<string, string>;
}

/**
 * A module's configuration, with the rules that span settings every service shares (the NATS
 * TLS pair): a module's schema is built from their fields alone, so they are checked here,
 * and listed in the same error as the module's own problems.
 */
export function loadServiceConfig(module: AnyServiceModule, env: Env): BaseConfig {
  const shared = checkBusSettings(env);
  let config: BaseConfig;
  try {
    config = module.loadConfig(env) as BaseConfig;
  } catch (err) {
    if (err instanceof ConfigError && shared.length) throw new ConfigError([...err.problems, ...shared]);
    throw err;
  }
  if (shared.length) throw new ConfigError(shared);
  return config;
}

/**
 * Starts a module in its own context (telemetry-modules: what it starts, its connections' and
 * timers' callbacks included, is traced under its service.name, also beside others in one process).
 */
export function startService(module: AnyServiceModule, opts: StartOptions): Promise<RunningService> {
  return inModule(module.name, () => startModule(module, opts));
}

async function startModule(module: AnyServiceModule, opts: StartOptions): Promise<RunningService> {
  const config = loadServiceConfig(module, opts.env);
  const log = (opts.log ?? createLogger({ service: module.name, level: config.LOG_LEVEL })).child({ service: module.name });
  const { life } = opts;
  let db: Kysely<unknown> | undefined;
  const checks: HealthChecks = {};
  if (module.database) {
    const dbOptions = {
      url: config.DATABASE_URL,
      schema: module.database.schema,
      genericPlans: module.database.genericPlans ?? false,
      onIdleError: (err: Error) => log.warn({ err: err.message }, 'idle database connection lost'),
    };
    const pool = createPool(dbOptions);
    const unobserved = observePool(pool, module.name, module.database.schema);
    db = life.add(`${module.name}:db`, createDb<unknown>(dbOptions, pool), (d) => (unobserved(), d.destroy()));
    const theDb = db;
    checks.database = () => pingDb(theDb);
    if (opts.migrate) {
      const { applied } = await migrate(db, module.database);
      if (applied.length) log.info({ applied }, 'migrations applied');
    }
  }
  const bus = life.add(
    `${module.name}:nats`,
    await connectBus(await busOptions(module.name, config, log)),
    (b) => b.drain(),
  );
  checks.nats = async () => {
    if (bus.nc.isClosed()) throw new Error('connection closed');
    await bus.nc.flush();
  };
  const started = await module.start({ config, log, life, bus, db: db as Kysely<unknown>, clock: opts.clock ?? systemClock });
  // One round trip to the server: every subscription the service made is in place before it
  // says it started, so a request sent right after finds it (no 503 no_responders).
  await bus.nc.flush();
  // Found by the admin service's health (discovery.ts): which instance, which version, since when.
  const discovery = answerDiscovery(bus, { service: module.name, instance_id: randomBytes(8).toString('hex'), version: VERSION, started_at: new Date().toISOString() });
  life.add(`${module.name}:discovery`, discovery, (d) => d.stop());
  Object.assign(checks, started?.checks ?? {});
  log.info({ endpoints: started?.endpoints }, 'started');
  return { name: module.name, config, checks, endpoints: started?.endpoints ?? {} };
}

/**
 * How `identity` connects: with its credentials from NATS_CREDENTIALS_DIR, which production
 * requires; elsewhere, without them, anonymously (a development server that allows it).
 */
export async function busOptions(identity: string, config: BaseConfig, log: Logger): Promise<BusOptions> {
  const base = { servers: config.NATS_URL.split(','), name: `mailroom-${identity}`, namespace: config.BUS_NAMESPACE, log, tls: natsTlsFiles(config) };
  // Production without it never gets here (checkBusSettings).
  if (!config.NATS_CREDENTIALS_DIR) return { ...base, identity: { name: identity } };
  const files = await readBusIdentity(config.NATS_CREDENTIALS_DIR, identity);
  // Every service checks the seals on tenant contexts; only the gateway makes them.
  const seal = contextSeal({ ...(files.sealMaster ? { masterKey: files.sealMaster } : {}), keys: files.sealKeys });
  return { ...base, identity: { name: identity, creds: files.creds }, seal, subjectKeys: files.subjectKeys };
}

/** Creates or updates every stream and bucket of the catalog, as the `migrate` identity, with NATS_STREAM_REPLICAS copies each. */
export async function provisionStreams(env: Env, log: Logger): Promise<void> {
  const problems = checkBusSettings(env);
  if (problems.length) throw new ConfigError(problems);
  const config = parseConfig(baseConfigSchema, env);
  const replication = replicationOf(env);
  const bus = await connectBus(await busOptions('migrate', config, log));
  try {
    const provisioned = await provisionBus(bus, replication);
    log.info({ streams: provisioned.length, replicas: replication.replicas }, 'bus provisioned');
  } finally {
    await bus.drain();
  }
}

/**
 * The process's telemetry: the one the preload started (libs/platform telemetry-preload), or,
 * when tracing is configured but was not preloaded, one started now, which misses the modules
 * already loaded (http, express, pg): said in the log.
 */
export function processTelemetry(name: string, env: Env, log: Logger): Telemetry {
  const preloaded = startedTelemetry();
  if (preloaded || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return preloaded ?? startTelemetry(name, env);
  log.warn('OTEL_EXPORTER_OTLP_ENDPOINT is set but tracing was not preloaded: start with node --require ./libs/platform/dist/telemetry-preload.js for HTTP, express and pg spans');
  return startTelemetry(name, env);
}

/** Runs one service as its own process (`node services/<name>/dist/main.js`): its health port, signals, telemetry. */
export async function runService(module: AnyServiceModule, env: Env): Promise<void> {
  const config = loadServiceConfig(module, env);
  const log = createLogger({ service: module.name, level: config.LOG_LEVEL });
  const life = new Lifecycle(log);
  // Trapped from the start: a SIGTERM during start-up (or right after the "started" line) stops
  // everything, in order, once start-up has settled, instead of killing the process where it stands.
  let settled!: () => void;
  life.trapSignals(undefined, new Promise<void>((resolve) => (settled = resolve)));
  const telemetry = processTelemetry(module.name, env, log);
  if (telemetry.enabled) life.add('telemetry', telemetry, (t) => t.shutdown());
  try {
    // Before the service starts: its instruments are made from the provider as it starts.
    const metrics = startMetrics(module.name, env);
    if (metrics.readers.length) life.add('metrics', metrics, (m) => m.shutdown());
    const migrate = env.MIGRATE_ON_START === 'true';
    if (migrate) await provisionStreams(env, log);
    const running = await startService(module, { env, life, log, migrate });
    if (config.HEALTH_PORT) {
      const health = await startHealthServer(config.HEALTH_PORT, running.checks);
      life.add('health', health, (h) => h.close());
      log.info({ port: health.port }, 'health endpoints on /livez, /readyz and /metrics');
    }
  } catch (err) {
    log.fatal({ err }, 'start-up failed');
    await life.stop('start-up failed');
    process.exit(1);
  } finally {
    settled();
  }
}

/** Applies the migrations of every module that owns a schema. */
export async function migrateAll(modules: AnyServiceModule[], env: Env, log: Logger): Promise<void> {
  // Every configuration is checked before any schema changes, so a bad one migrates nothing.
  const configs = modules.map((m) => loadServiceConfig(m, env));
  for (const [i, module] of modules.entries()) {
    if (!module.database) continue;
    const config = configs[i]!;
    const db = createDb<unknown>({ url: config.DATABASE_URL, schema: module.database.schema, max: 1 });
    try {
      const { applied } = await migrate(db, module.database);
      log.info({ schema: module.database.schema, applied }, applied.length ? 'migrated' : 'up to date');
    } finally {
      await db.destroy();
    }
  }
}
