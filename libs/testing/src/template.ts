/**
 * The run's template database: every service schema migrated once, in jest's global set-up;
 * each test file's database is a copy of it (CREATE DATABASE ... TEMPLATE), which costs what
 * an empty database costs, where migrating every file's database from scratch cost seconds.
 * Its name carries the run id, so it goes with the run's other databases (teardown, dropStale).
 */
import { createDb, migrate } from '@mailroom/db';
import { createDatabase, dropDatabases } from './infra';

/** What a service module declares as its `database`: a schema and its migrations. */
export interface SchemaMigrations {
  schema: string;
  migrationsDir: string;
}

/** Set by the global set-up for the test files (workers inherit it): the template's name. */
export const TEMPLATE_ENV = 'MAILROOM_TEST_TEMPLATE';

export function templateName(run: string): string {
  return `${run}_template`;
}

/** Creates database `name` with every schema of `schemas` migrated to its latest; closes its connections. */
export async function createTemplateDatabase(databaseUrl: string, name: string, schemas: SchemaMigrations[]): Promise<void> {
  const url = await createDatabase(databaseUrl, name);
  // One connection per schema, in parallel: schemas share nothing, and each migration takes
  // its own schema's advisory lock. Every connection is closed before the copies begin.
  const migrated = await Promise.allSettled(
    schemas.map(async (s) => {
      const db = createDb<unknown>({ url, schema: s.schema, max: 1 });
      try {
        await migrate(db, s);
      } finally {
        await db.destroy();
      }
    }),
  );
  const failed = migrated.find((r) => r.status === 'rejected');
  if (failed) {
    // jest runs no teardown after a failed set-up: the template goes now, not with a later run's sweep.
    await dropDatabases(databaseUrl, (db) => db === name);
    throw failed.reason;
  }
}
