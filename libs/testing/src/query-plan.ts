/**
 * The plan PostgreSQL runs a repository's statement with, for tests that an index serves it.
 * The statement is the one the repository sends (prepared by libs/db's client, read back
 * from pg_prepared_statements), planned generically, as a prepared statement may be after a
 * few executions, and with sequential scans priced out, so the plan shows which index can
 * serve it whatever the table holds.
 */
import { sql, type Kysely, type Transaction } from '@mailroom/db';

/**
 * `run` sends one statement with parameters on the transaction it is given; `values` are its
 * parameters again, in order, for EXPLAIN EXECUTE.
 */
export async function genericPlanOf<DB>(db: Kysely<DB>, run: (trx: Transaction<DB>) => Promise<unknown>, values: (string | Date)[]): Promise<string> {
  return db.transaction().execute(async (trx) => {
    // Plans cached before were made under other settings: the statement is planned again below.
    await sql`discard plans`.execute(trx);
    await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
    await sql`set local enable_seqscan = off`.execute(trx);
    // The statement `run` sent: the one prepared now or executed once more (prepared on this connection before).
    const executions = async () => new Map((await sql<{ name: string; n: number }>`select name, (generic_plans + custom_plans)::int as n from pg_prepared_statements`.execute(trx)).rows.map((r) => [r.name, r.n]));
    const before = await executions();
    await run(trx);
    const ran = [...(await executions())].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name);
    if (ran.length !== 1) throw new Error(`genericPlanOf(): expected one prepared statement to run, found ${ran.length}`);
    const args = values.map((v) => sql.lit(v instanceof Date ? v.toISOString() : v));
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain execute ${sql.raw(ran[0]!)}(${sql.join(args)})`.execute(trx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}
