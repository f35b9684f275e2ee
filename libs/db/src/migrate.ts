/**
 * Raw-SQL migrations, one pair of files per step in the service's migrations/ folder:
 * `<yyyymmddhhmmss>_<name>.up.sql` and the matching `.down.sql`. They run by explicit
 * command (and by `npm start` in development), never as a side effect of an import, in
 * the service's schema, under a session advisory lock so replicas can boot together.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely/migration';
import { assertSchemaName } from './db';

const FILE = /^(\d{14}_[a-z0-9_]+)\.(up|down)\.sql$/;

export class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => f.endsWith('.sql'));
    const steps = new Map<string, { up?: string; down?: string }>();
    for (const file of files) {
      const m = FILE.exec(file);
      if (!m) throw new Error(`migration file name not understood: ${file} (expected <14 digits>_<name>.up|down.sql)`);
      const step = steps.get(m[1]!) ?? {};
      step[m[2] as 'up' | 'down'] = await readFile(path.join(this.dir, file), 'utf8');
      steps.set(m[1]!, step);
    }
    const migrations: Record<string, Migration> = {};
    for (const [name, step] of [...steps].sort(([a], [b]) => a.localeCompare(b))) {
      if (step.up === undefined) throw new Error(`migration ${name} has no .up.sql`);
      const up = step.up;
      const down = step.down;
      migrations[name] = {
        up: async (db) => void (await sql.raw(up).execute(db)),
        ...(down === undefined ? {} : { down: async (db: Kysely<unknown>) => void (await sql.raw(down).execute(db)) }),
      };
    }
    return migrations;
  }
}

export interface MigrateOptions {
  schema: string;
  migrationsDir: string;
  /** 'latest' (default) or 'down' for one step back. */
  direction?: 'latest' | 'down';
}

export interface MigrateResult {
  applied: string[];
}

export async function migrate(db: Kysely<unknown>, opts: MigrateOptions): Promise<MigrateResult> {
  assertSchemaName(opts.schema);
  return db.connection().execute(async (conn) => {
    const lockKey = `mailroom.migrate.${opts.schema}`;
    await sql`select pg_advisory_lock(hashtext(${lockKey}))`.execute(conn);
    try {
      await sql.raw(`create schema if not exists ${opts.schema}`).execute(conn);
      await sql.raw(`set search_path to ${opts.schema}`).execute(conn);
      const migrator = new Migrator({
        db: conn,
        provider: new SqlFileMigrationProvider(opts.migrationsDir),
        migrationTableSchema: opts.schema,
      });
      const run: MigrationResultSet =
        opts.direction === 'down' ? await migrator.migrateDown() : await migrator.migrateToLatest();
      if (run.error) {
        const failed = run.results?.find((r) => r.status === 'Error')?.migrationName;
        const reason = run.error instanceof Error ? run.error.message : String(run.error);
        throw new Error(`migration ${failed ?? '(listing)'} of schema ${opts.schema} failed: ${reason}`, { cause: run.error });
      }
      return { applied: (run.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${lockKey}))`.execute(conn);
    }
  });
}
