/** The migrator against the real server: concurrent starts, one application, the schema of its own. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestContext, type TestContext } from '@mailroom/testing';
import { createDb, migrate, sql } from '../src';

let ctx: TestContext;
let dir: string;

beforeAll(async () => {
  // Not a copy of the run's template: the migrator starts from nothing here.
  ctx = await createTestContext({}, { database: 'empty' });
  dir = await mkdtemp(path.join(tmpdir(), 'mr-migrations-'));
  await writeFile(path.join(dir, '20260101000000_first.up.sql'), 'create table things (id text primary key);\ninsert into things values (\'a\');');
  await writeFile(path.join(dir, '20260101000000_first.down.sql'), 'drop table things;');
  await writeFile(path.join(dir, '20260102000000_second.up.sql'), 'alter table things add column n int not null default 0;');
});

afterAll(async () => {
  await ctx?.cleanup();
});

it('starts from a database without a schema of ours', async () => {
  const db = createDb({ url: ctx.env.DATABASE_URL!, schema: 'public', max: 1 });
  try {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_namespace where not starts_with(nspname, 'pg_') and nspname not in ('public', 'information_schema')`.execute(db);
    expect(rows).toEqual([]);
  } finally {
    await db.destroy();
  }
});

it('applies pending migrations once when several instances start together', async () => {
  const dbs = Array.from({ length: 4 }, () => createDb({ url: ctx.env.DATABASE_URL!, schema: 'svc', max: 2 }));
  try {
    const results = await Promise.all(dbs.map((db) => migrate(db, { schema: 'svc', migrationsDir: dir })));
    expect(results.flatMap((r) => r.applied).sort()).toEqual(['20260101000000_first', '20260102000000_second']);
    const rows = await sql<{ id: string; n: number }>`select id, n from things`.execute(dbs[0]!);
    expect(rows.rows).toEqual([{ id: 'a', n: 0 }]);
    // Unqualified names resolve to the service's schema only.
    const where = await sql<{ table_schema: string }>`select table_schema from information_schema.tables where table_name = 'things'`.execute(dbs[0]!);
    expect(where.rows).toEqual([{ table_schema: 'svc' }]);
    expect((await migrate(dbs[1]!, { schema: 'svc', migrationsDir: dir })).applied).toEqual([]);
  } finally {
    await Promise.all(dbs.map((db) => db.destroy()));
  }
});

it('refuses a migration folder with a badly named file', async () => {
  const bad = await mkdtemp(path.join(tmpdir(), 'mr-migrations-bad-'));
  await writeFile(path.join(bad, 'init.sql'), 'select 1;');
  const db = createDb({ url: ctx.env.DATABASE_URL!, schema: 'bad' });
  try {
    await expect(migrate(db, { schema: 'bad', migrationsDir: bad })).rejects.toThrow(/not understood/);
  } finally {
    await db.destroy();
  }
});
