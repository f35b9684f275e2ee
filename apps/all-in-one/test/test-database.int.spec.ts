/**
 * A test file's database is a copy of the run's template (libs/testing template.ts): every
 * service's schema is in it, migrated, so the services started on it apply no migration.
 */
import { createDb, migrate } from '@mailroom/db';
import { SERVICES } from '../src/platform';
import { useTestContext } from './fixtures';

const ctx = useTestContext();

it("holds every service's schema with all of its migrations applied", async () => {
  const schemas = Object.values(SERVICES).flatMap((m) => (m.database ? [m.database] : []));
  expect(schemas.length).toBeGreaterThan(0);
  for (const schema of schemas) {
    const db = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: schema.schema, max: 1 });
    try {
      expect({ schema: schema.schema, applied: (await migrate(db, schema)).applied }).toEqual({ schema: schema.schema, applied: [] });
    } finally {
      await db.destroy();
    }
  }
});
