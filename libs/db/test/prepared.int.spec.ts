/** Statements with parameters are prepared once per connection and reused; a table changed under one is survived. */
import { createTestContext, type TestContext } from '@mailroom/testing';
import { createDb, sql, type Kysely } from '../src';

interface Things {
  things: { id: string; n: number };
}

let ctx: TestContext;
let db: Kysely<Things>;

beforeAll(async () => {
  ctx = await createTestContext();
  // One connection: every statement below meets the statements prepared before it.
  db = createDb<Things>({ url: ctx.env.DATABASE_URL!, schema: 'prep', max: 1 });
  await sql`create schema prep`.execute(db);
  await sql`create table things (id text primary key, n int not null)`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

async function prepared(): Promise<string[]> {
  const rows = await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db);
  return rows.rows.map((r) => r.statement);
}

it('prepares a statement with parameters once and binds it again for other values', async () => {
  for (let i = 0; i < 5; i++) await db.insertInto('things').values({ id: `t${i}`, n: i }).execute();
  const found = await db.selectFrom('things').select(['id', 'n']).where('n', '>=', 3).orderBy('n').execute();
  expect(found).toEqual([
    { id: 't3', n: 3 },
    { id: 't4', n: 4 },
  ]);
  const statements = await prepared();
  expect(statements.filter((s) => s.startsWith('insert into "things"'))).toHaveLength(1);
  expect(statements.filter((s) => s.startsWith('select "id", "n" from "things"'))).toHaveLength(1);
  // Statements without parameters (transaction control, this one) keep the simple protocol.
  expect(statements.some((s) => s.includes('pg_prepared_statements'))).toBe(false);
});

it('prepares a statement again after a migration changed what it returns', async () => {
  const one = (trx: Kysely<Things> = db) => trx.selectFrom('things').selectAll().where('id', '=', 't1').execute();
  expect(await one()).toEqual([{ id: 't1', n: 1 }]);
  await sql`alter table things add column label text not null default 'x'`.execute(db);
  // Outside a transaction, the refused plan ("cached plan must not change result type") is
  // replaced and the statement run again at once.
  expect(await one()).toEqual([{ id: 't1', n: 1, label: 'x' }]);

  await sql`alter table things add column size int not null default 7`.execute(db);
  // Inside one, the transaction has failed: the error reaches the caller, and the next use works.
  await expect(db.transaction().execute((trx) => one(trx))).rejects.toMatchObject({ code: '0A000' });
  expect(await db.transaction().execute((trx) => one(trx))).toEqual([{ id: 't1', n: 1, label: 'x', size: 7 }]);
});

it('plans its prepared statements afresh every planRefreshMs, so a table that grew is not read with the plan of its empty days', async () => {
  let now = 0;
  const grown = createDb<{ pt: { id: string; a: string; b: string; c: Date } }>({ url: ctx.env.DATABASE_URL!, schema: 'prep', max: 1, planRefreshMs: 10_000, now: () => now });
  try {
    // No autovacuum: its ANALYZE would replace the plan by itself.
    await sql`create table pt (id text primary key, a text not null, b text not null, c timestamptz not null, pad text) with (autovacuum_enabled = false)`.execute(grown);
    await sql`create index pt_by_a on pt (a, c desc, id desc)`.execute(grown);
    await sql`create unique index pt_ab on pt (a, b)`.execute(grown);
    await sql`set plan_cache_mode = force_generic_plan`.execute(grown);
    const find = () => grown.selectFrom('pt').select('id').where('a', '=', 'x').where('b', '=', 'y').execute();
    const plan = async () => {
      const name = (await sql<{ name: string }>`select name from pg_prepared_statements where statement like 'select "id" from "pt"%'`.execute(grown)).rows[0]!.name;
      const rows = await sql<{ 'QUERY PLAN': string }>`explain execute ${sql.raw(name)}('x', 'y')`.execute(grown);
      return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    await find();
    const empty = await plan();
    await sql`insert into pt select 'i' || g, 'x', 'b' || g, now(), repeat('p', 200) from generate_series(1, 50000) g`.execute(grown);
    now += 9_999;
    await find();
    expect(await plan()).toBe(empty); // the plan made on the empty table, still
    now += 1;
    await find();
    const fresh = await plan();
    expect(fresh).not.toBe(empty); // made again, for the table as it is now
    expect(await find()).toEqual([]);
  } finally {
    await grown.destroy();
  }
});

it('runs prepared statements with their generic plan from the first execution when genericPlans is set', async () => {
  const generic = createDb<Things>({ url: ctx.env.DATABASE_URL!, schema: 'prep', max: 1, genericPlans: true });
  try {
    const mode = async (d: Kysely<Things>) => (await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(d)).rows[0]!.mode;
    expect(await mode(generic)).toBe('force_generic_plan');
    expect(await mode(db)).toBe('auto');
    // One execution of a prepared statement: with genericPlans it has been planned generically already.
    await generic.selectFrom('things').select('id').where('n', '=', 1).execute();
    const counts = await sql<{ generic_plans: number; custom_plans: number }>`
      select generic_plans::int, custom_plans::int from pg_prepared_statements where statement like 'select "id" from "things"%'`.execute(generic);
    expect(counts.rows).toEqual([{ generic_plans: 1, custom_plans: 0 }]);
  } finally {
    await generic.destroy();
  }
});
