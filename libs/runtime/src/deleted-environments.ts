/**
 * The environments a service learnt were deleted: table `deleted_environments` in its schema
 * (env_id text primary key, org_id text not null, deleted_at timestamptz not null; see
 * services/auth/migrations), written when it reads `internal.orgs.environment.deleted`.
 *
 * Why a lock: a creation is one statement that inserts only when no row here names its
 * environment, and the deletion's transaction records the row, then removes what the
 * environment holds. Under READ COMMITTED that alone leaves a gap: a creation whose
 * statement began before the record commits inserts, and the removal, which cannot see
 * an insert not yet committed, misses it. Recording first takes this table in ACCESS
 * EXCLUSIVE mode until the transaction ends: it waits for every creation in flight (each read
 * the table, and keeps its lock until it commits), so the removal sees what they made, and
 * the creations after it wait for the commit, then see the row (PostgreSQL takes a
 * statement's snapshot once the locks of its tables are granted). Only creations and
 * deletions read this table: nothing else waits.
 */
import { sql, type Transaction } from '@mailroom/db';
import type { EnvironmentTombstones } from '@mailroom/platform';

export class DeletedEnvironments<DB> implements EnvironmentTombstones<Transaction<DB>> {
  async record(trx: Transaction<DB>, env: { org_id: string; env_id: string; deleted_at: Date }): Promise<boolean> {
    await sql`lock table deleted_environments in access exclusive mode`.execute(trx);
    const res = await sql`
      insert into deleted_environments (env_id, org_id, deleted_at) values (${env.env_id}, ${env.org_id}, ${env.deleted_at})
      on conflict (env_id) do nothing`.execute(trx);
    return (res.numAffectedRows ?? 0n) > 0n;
  }
}
