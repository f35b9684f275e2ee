/**
 * Recording a deleted environment against the real server: a creation in flight when the
 * deletion starts is seen (and removed) by it; a creation that starts while the deletion is
 * open waits, then is refused. Each interleaving is forced: one side holds its transaction
 * open until the server shows the other waiting for its lock.
 */
import { newId } from '@mailroom/contracts';
import { createDb, sql, type Kysely, type Transaction } from '@mailroom/db';
import { createTestContext, waitFor, type TestContext } from '@mailroom/testing';
import { DeletedEnvironments } from '../src';

interface Db {
  deleted_environments: { env_id: string; org_id: string; deleted_at: Date };
  things: { id: string; org_id: string; env_id: string; deleted_at: Date | null };
}

let ctx: TestContext;
let db: Kysely<Db>;
const tombstones = new DeletedEnvironments<Db>();
const org = newId('organization');

beforeAll(async () => {
  ctx = await createTestContext({}, { bus: 'empty' });
  db = createDb<Db>({ url: ctx.env.DATABASE_URL!, schema: 'svc', max: 4 });
  await sql`create schema svc`.execute(db);
  // The table as each owner's migrations create it, and a resource of an environment.
  await sql`create table deleted_environments (env_id text primary key, org_id text not null, deleted_at timestamptz not null)`.execute(db);
  await sql`create table things (id text primary key, org_id text not null, env_id text not null, deleted_at timestamptz)`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

/** A creation as the owners write theirs: one statement, inserting only in an environment not recorded as deleted. */
async function create(ex: Kysely<Db> | Transaction<Db>, envId: string): Promise<string | undefined> {
  const id = newId('inbox');
  const res = await ex
    .insertInto('things')
    .columns(['id', 'org_id', 'env_id'])
    .expression(
      ex
        .selectNoFrom((eb) => [eb.val(id).as('id'), eb.val(org).as('org_id'), eb.val(envId).as('env_id')])
        .where((eb) => eb.not(eb.exists(eb.selectFrom('deleted_environments').select('env_id').where('org_id', '=', org).where('env_id', '=', envId)))),
    )
    .executeTakeFirst();
  return res.numInsertedOrUpdatedRows === 1n ? id : undefined;
}

/** A deletion as the owners apply theirs: the record, then the removal, in one transaction. */
async function remove(trx: Transaction<Db>, envId: string): Promise<{ first: boolean; removed: string[] }> {
  const first = await tombstones.record(trx, { org_id: org, env_id: envId, deleted_at: new Date() });
  const rows = await trx.updateTable('things').set({ deleted_at: new Date() }).where('org_id', '=', org).where('env_id', '=', envId).where('deleted_at', 'is', null).returning('id').execute();
  return { first, removed: rows.map((r) => r.id) };
}

/** Whether a statement of this database waits for a lock now. */
async function someoneWaits(): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
  return (rows[0]?.n ?? 0) > 0;
}

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

it('records an environment once: a fact read again changes nothing', async () => {
  const env = newId('environment');
  const made = await create(db, env);
  expect(await db.transaction().execute((trx) => remove(trx, env))).toEqual({ first: true, removed: [made] });
  expect(await db.transaction().execute((trx) => remove(trx, env))).toEqual({ first: false, removed: [] });
  expect(await create(db, env)).toBeUndefined();
  // Another environment is not concerned.
  expect(await create(db, newId('environment'))).toBeDefined();
});

it('holds a creation that starts while the deletion is open, then refuses it', async () => {
  const env = newId('environment');
  const hold = gate();
  let creation: Promise<string | undefined> | undefined;
  const deletion = db.transaction().execute(async (trx) => {
    const applied = await remove(trx, env);
    creation = create(db, env);
    await hold.opened;
    return applied;
  });
  await waitFor(async () => creation && (await someoneWaits()), { timeoutMs: 5_000, what: 'the creation to wait for the deletion' });
  hold.open();
  expect(await deletion).toEqual({ first: true, removed: [] });
  expect(await creation).toBeUndefined();
  expect(await db.selectFrom('things').select('id').where('env_id', '=', env).execute()).toEqual([]);
});

it('holds the deletion while a creation that read no record is open, then removes what it made', async () => {
  const env = newId('environment');
  const made = gate();
  const hold = gate();
  let id: string | undefined;
  const creation = db.transaction().execute(async (trx) => {
    id = await create(trx, env);
    made.open();
    await hold.opened;
  });
  await made.opened;
  expect(id).toBeDefined();
  const deletion = db.transaction().execute((trx) => remove(trx, env));
  await waitFor(someoneWaits, { timeoutMs: 5_000, what: 'the deletion to wait for the creation' });
  hold.open();
  await creation;
  expect(await deletion).toEqual({ first: true, removed: [id] });
  expect(await create(db, env)).toBeUndefined();
});
