/**
 * Kysely on pg, one PostgreSQL schema per service: every connection of a service's pool
 * has its search_path set to that schema, so a service cannot name another's tables by
 * accident and its queries stay unqualified.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Transact } from '@mailroom/platform';

// timestamptz and bigint arrive as Date and string by default; count(*) is bigint.
// int8 is parsed to number: our counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface DbOptions {
  url: string;
  schema: string;
  /** Pool size; default 10. */
  max?: number;
  applicationName?: string;
  /** Per-statement bound in ms, enforced by the server; default 30 s. */
  statementTimeoutMs?: number;
  /**
   * How long the client waits for any answer to a statement before it gives the connection
   * up (closes it: the statement and those queued behind it fail, the pool replaces it);
   * default the statement bound + 15 s. It matters only when the server or the path to it is
   * gone without a word (a host that died, a dropped route): the server's own bound ends a
   * statement first otherwise, and without this the statement would wait for ever.
   */
  queryTimeoutMs?: number;
  /** An idle pooled connection was lost (server restart, failover). The pool replaces it. */
  onIdleError?: (err: Error) => void;
  /** How often a connection has PostgreSQL plan its prepared statements afresh; default 10 s. */
  planRefreshMs?: number;
  /** The clock of the plan refresh (tests). */
  now?: () => number;
  /**
   * Prepared statements always run their generic plan (`plan_cache_mode =
   * force_generic_plan`) instead of being planned for each execution's parameters. For a
   * schema whose statements are all driven by keys and unnest()ed arrays, where a plan for
   * the values is no better than the generic one and planning costs as much as running.
   */
  genericPlans?: boolean;
}

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name: ${schema}`);
}

/** How often a connection's prepared statements are planned afresh (see PreparingClient). */
const PLAN_REFRESH_MS = 10_000;
/** Distinct statements a connection keeps prepared; past this, statements are sent unnamed. */
const PREPARED_PER_CONNECTION = 256;
/** "cached plan must not change result type": a table changed under a prepared statement. */
const CACHED_PLAN_CHANGED = '0A000';

/**
 * A pg client that prepares each parameterized statement once per connection, by name, and
 * then only binds and executes it: PostgreSQL parses and plans a statement the first time
 * and reuses the plan after (kysely sends the same texts again and again). Statements
 * without parameters (begin, commit) keep the simple protocol. When a migration changes a
 * table under a prepared statement, PostgreSQL refuses it (0A000); it is then prepared again
 * under a new name, at once when no transaction was open (nothing else was affected), else
 * on its next use (the transaction has failed and its caller retries as for any error).
 */
class PreparingClient extends pg.Client {
  readonly #names = new Map<string, string>();
  #next = 0;
  readonly #refreshMs: number;
  readonly #now: () => number;
  #plannedAt: number;

  readonly #answerMs: number | undefined;

  constructor(config: pg.ClientConfig & { planRefreshMs?: number; now?: () => number; answerTimeoutMs?: number } = {}) {
    super(config);
    this.#refreshMs = config.planRefreshMs ?? PLAN_REFRESH_MS;
    this.#now = config.now ?? Date.now;
    this.#plannedAt = this.#now();
    this.#answerMs = config.answerTimeoutMs;
  }

  override query(...args: unknown[]): never {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const name = this.#nameOf(text);
      if (name !== undefined) {
        this.#refreshPlans();
        return this.#watched(this.#prepared(name, text, values, true)) as never;
      }
    }
    const last = args.at(-1);
    if (this.#answerMs !== undefined && typeof last === 'function') {
      // Callback style (pg-pool's pool.query): the watch ends when the callback is called.
      const end = this.#watch();
      args[args.length - 1] = (...results: unknown[]) => {
        end();
        (last as (...r: unknown[]) => void)(...results);
      };
      return (super.query as (...a: unknown[]) => unknown)(...args) as never;
    }
    return this.#watched((super.query as (...a: unknown[]) => unknown)(...args)) as never;
  }

  /** Watches a statement's promise (other results, such as a submitted cursor, are not watched). */
  #watched(result: unknown): unknown {
    if (this.#answerMs === undefined || !(result instanceof Promise)) return result;
    const end = this.#watch();
    result.then(end, end);
    return result;
  }

  /** Closes the connection if the statement has no answer in time (see DbOptions.queryTimeoutMs); returns the end of the watch. */
  #watch(): () => void {
    const timer = setTimeout(() => {
      // Everything on this connection fails at once ("Connection terminated"), and the pool
      // drops it when it comes back (it is no longer queryable).
      (this as unknown as { connection: { stream: { destroy(err?: Error): void } } }).connection.stream.destroy(new Error(`no answer from PostgreSQL in ${this.#answerMs} ms`));
    }, this.#answerMs);
    timer.unref();
    return () => clearTimeout(timer);
  }

  /**
   * PostgreSQL keeps a prepared statement's generic plan until the table's statistics
   * change. A table that grows from nothing before autovacuum first analyzes it (it looks
   * once a minute) keeps the plans made when it was empty, and those can read a whole
   * inbox for one row (in bench:ingest, 1.1 ms instead of 20 us per inbound message).
   * `discard plans` has them made again, at most every PLAN_REFRESH_MS, between
   * transactions; it is queued before the statement, so it costs no wait.
   */
  #refreshPlans(): void {
    const now = this.#now();
    if (now - this.#plannedAt < this.#refreshMs || this.getTransactionStatus() !== 'I') return;
    this.#plannedAt = now;
    (super.query as (text: string) => Promise<unknown>)('discard plans').catch(() => {
      // The statement queued behind it meets the same connection error and reports it.
    });
  }

  async #prepared(name: string, text: string, values: unknown[], retry: boolean): Promise<unknown> {
    try {
      return await super.query({ name, text, values });
    } catch (err) {
      if ((err as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw err;
      this.#names.delete(text);
      const again = this.#nameOf(text);
      if (!retry || again === undefined || this.getTransactionStatus() !== 'I') throw err;
      return this.#prepared(again, text, values, false);
    }
  }

  #nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < PREPARED_PER_CONNECTION) {
      name = `mr_${(this.#next++).toString(36)}`;
      this.#names.set(text, name);
    }
    return name;
  }
}

export function createPool(opts: DbOptions): pg.Pool {
  assertSchemaName(opts.schema);
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? `mailroom-${opts.schema}`,
    options: `-c search_path=${opts.schema} -c statement_timeout=${opts.statementTimeoutMs ?? 30_000}${opts.genericPlans ? ' -c plan_cache_mode=force_generic_plan' : ''}`,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // An idle connection to a server that is gone is found out by TCP, not by its next user.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    answerTimeoutMs: opts.queryTimeoutMs ?? (opts.statementTimeoutMs ?? 30_000) + 15_000,
    ...(opts.planRefreshMs !== undefined ? { planRefreshMs: opts.planRefreshMs } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  } as pg.PoolConfig);
  // Without a listener, an idle connection the server closes would crash the process.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // The pool listens for errors only while a connection is idle. One the server closes while
  // it is checked out (a transaction waiting between statements, say on a publish) emits
  // 'error' on its client, which would crash the process too: its next statement fails
  // instead, and its user handles that.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Kysely over a pool of `opts` (or the one given, made with createPool: a caller that watches its use). */
export function createDb<DB>(opts: DbOptions, pool: pg.Pool = createPool(opts)): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** A repository method takes either the database or a transaction opened by its caller. */
export type Executor<DB> = Kysely<DB> | Transaction<DB>;

export function withTransaction<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}

/** The domain's transaction runner (platform's Transact port) over this database. */
export function transactor<DB>(db: Kysely<DB>): Transact<Transaction<DB>> {
  return (work) => withTransaction(db, work);
}

export async function pingDb(db: Kysely<unknown>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Postgres error code of a unique violation, for turning a race into a 409. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** Postgres error code of a foreign key violation: a row referred to went away meanwhile (a race that is a 404). */
export function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503';
}

/**
 * Creates the database named in `url` when it does not exist (development and tests; in
 * production the database is provisioned). Connects to the server's `postgres` database.
 */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[a-zA-Z0-9_-]{1,63}$/.test(name)) throw new Error(`refusing to create database with name ${JSON.stringify(name)}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`create database "${name}"`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err; // created concurrently
    }
    return true;
  } finally {
    await client.end();
  }
}
