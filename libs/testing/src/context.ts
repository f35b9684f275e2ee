/**
 * Per test file: an environment for the platform pointing at a new database and a new
 * NATS namespace; cleanup() drops both. The database is a copy of the run's template (every
 * service schema migrated) when the global set-up made one, else empty. Everything the
 * services read from the environment can be overridden.
 */
import { createDb, migrate, type Kysely } from '@mailroom/db';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { provisionBus } from '@mailroom/messaging';
import { connectTestBus, writeTestCredentials } from './bus-auth';
import { createDatabase, dropDatabases, deleteStreams, newRunId, serverUrls } from './infra';
import { TEMPLATE_ENV } from './template';

export interface TestContext {
  /** Unique name of this context: database name and bus namespace. */
  id: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

let counter = 0;

export interface TestContextOptions {
  /**
   * 'migrated' (default): a copy of the run's template, or an empty database outside a jest
   * run (the services started on it migrate it). 'empty': no schema at all, for tests of the
   * migrator itself.
   */
  database?: 'migrated' | 'empty';
  /** 'provisioned' (default): every stream and bucket made, as by the migrate step. 'empty': none. */
  bus?: 'provisioned' | 'empty';
}

export async function createTestContext(overrides: Record<string, string> = {}, opts: TestContextOptions = {}): Promise<TestContext> {
  const urls = serverUrls();
  const run = process.env.MAILROOM_TEST_RUN ?? newRunId();
  // jest loads this module afresh for each file a worker runs: the counter starts again, and
  // the random part keeps a context left behind by a failed file from meeting the next one's.
  const id = `${run}_${process.pid}_${++counter}${randomBytes(3).toString('hex')}`;
  const template = opts.database === 'empty' ? undefined : process.env[TEMPLATE_ENV];
  const databaseUrl = await createDatabase(urls.databaseUrl, id, template);
  const credentials = await writeTestCredentials(id);
  const env: Record<string, string> = {
    MAILROOM_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: databaseUrl,
    NATS_URL: urls.natsUrl,
    RSPAMD_URL: urls.rspamdUrl,
    BUS_NAMESPACE: id,
    NATS_CREDENTIALS_DIR: credentials,
    // Every listener on a free loopback port: a fixed one (the SMTP edge's 2525) may be taken
    // by anything else on the machine, `npm start` included.
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    SMTP_PORT: '0',
    SMTP_HOST: '127.0.0.1',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
    // Mail leaves only through a relay the test names: the platform's own mail (a signup's
    // verification code) must never reach a machine's real MTA on port 25. Port 1 refuses.
    SMTP_RELAY_URL: 'smtp://127.0.0.1:1',
    // Every test's organization starts on the free plan: room for what tests and benchmarks
    // make (lists paged over many inboxes, colleagues, environments). The plans' own tests
    // set tight limits; the counting runs either way.
    PLAN_FREE_LIMITS: 'inboxes=100000,domains=1000,members=1000,environments=1000,webhook_endpoints=1000',
    ...overrides,
  };
  // The namespace's streams and buckets, as the migrate step makes them (services may not).
  if (opts.bus !== 'empty') {
    const bus = await connectTestBus(env, 'migrate', 'test-provision');
    try {
      await provisionBus(bus);
    } finally {
      await bus.drain();
    }
  }
  return {
    id,
    env,
    async cleanup() {
      await deleteStreams(urls.natsUrl, (name) => name.startsWith(`${id}_`));
      await dropDatabases(urls.databaseUrl, (name) => name === id);
      rmSync(credentials, { recursive: true, force: true });
    },
  };
}

/**
 * The database of `ctx` with one service's schema migrated, for repository tests that run
 * against the real server without starting the service (on a copy of the template, the
 * migrator finds every step applied).
 */
export async function migratedDb<DB>(ctx: TestContext, opts: { schema: string; migrationsDir: string; max?: number }): Promise<Kysely<DB>> {
  const plain = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: opts.schema, max: 1 });
  try {
    await migrate(plain, { schema: opts.schema, migrationsDir: opts.migrationsDir });
  } finally {
    await plain.destroy();
  }
  return createDb<DB>({ url: ctx.env.DATABASE_URL!, schema: opts.schema, max: opts.max ?? 2 });
}
