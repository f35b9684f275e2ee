/**
 * Recoveries: the request (an endpoint and a window) and its progress through the event
 * stream, worked on under a lease by one instance at a time. Reads for the API are scoped
 * to the tenant through the endpoint.
 */
import type { Tenant } from '@mailroom/contracts';
import { isForeignKeyViolation, sql, type Executor, type Kysely, type Selectable, type ExpressionBuilder, type UpdateObject } from '@mailroom/db';
import type { RecoveryTable, WebhooksDb } from './tables';

export type RecoveryRow = Selectable<RecoveryTable>;
type RecoveryUpdate = UpdateObject<WebhooksDb, 'recoveries'> | ((eb: ExpressionBuilder<WebhooksDb, 'recoveries'>) => UpdateObject<WebhooksDb, 'recoveries'>);

export class RecoveryRepository {
  constructor(private readonly db: Kysely<WebhooksDb>) {}

  /** Starts a recovery, unless one is running for the endpoint: then that one is returned as `running`. */
  /** `endpointGone`: the endpoint was deleted (the recovery's foreign key). */
  async start(row: { id: string; endpoint_id: string; since: Date; until: Date; now: Date }): Promise<{ started: RecoveryRow } | { running: RecoveryRow } | { endpointGone: true }> {
    // Twice at most: a running recovery that finishes between the insert and the read leaves room for this one.
    for (let i = 0; i < 2; i++) {
      let rows: RecoveryRow[];
      try {
        ({ rows } = await sql<RecoveryRow>`
          insert into recoveries (id, endpoint_id, since, until, status, created_at, updated_at)
          values (${row.id}, ${row.endpoint_id}, ${row.since}, ${row.until}, 'running', ${row.now}, ${row.now})
          on conflict (endpoint_id) where status = 'running' do nothing
          returning *`.execute(this.db));
      } catch (err) {
        if (isForeignKeyViolation(err)) return { endpointGone: true };
        throw err;
      }
      if (rows[0]) return { started: rows[0] };
      const running = await this.db.selectFrom('recoveries').selectAll().where('endpoint_id', '=', row.endpoint_id).where('status', '=', 'running').executeTakeFirst();
      if (running) return { running };
    }
    throw new Error('a recovery of this endpoint kept starting and finishing meanwhile');
  }

  /** A recovery of one of the tenant's endpoints. */
  find(t: Tenant, endpointId: string, id: string, ex: Executor<WebhooksDb> = this.db): Promise<RecoveryRow | undefined> {
    return ex
      .selectFrom('recoveries as r')
      .innerJoin('endpoints as e', 'e.id', 'r.endpoint_id')
      .selectAll('r')
      .where('e.org_id', '=', t.org_id)
      .where('e.env_id', '=', t.env_id)
      .where('r.endpoint_id', '=', endpointId)
      .where('r.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Takes the oldest running recovery no instance holds a lease on (none, or one run out),
   * leased to `owner` until `leaseUntil`; none of `exclude` (those this instance runs: a run
   * whose lease ran out is not started a second time beside itself).
   */
  async take(owner: string, now: Date, leaseUntil: Date, exclude: string[] = []): Promise<RecoveryRow | undefined> {
    const { rows } = await sql<RecoveryRow>`
      update recoveries set lease_owner = ${owner}, lease_until = ${leaseUntil}, updated_at = ${now}
      where id = (
        select id from recoveries
        where status = 'running' and (lease_until is null or lease_until < ${now}) and not (id = any(${exclude}::text[]))
        order by created_at limit 1
        for update skip locked
      )
      returning *`.execute(this.db);
    return rows[0];
  }

  /** Renews the lease of a recovery `owner` runs; false when it is no longer its own (taken over, deleted, ended). */
  renew(id: string, owner: string, leaseUntil: Date): Promise<boolean> {
    return this.updateOwned(id, owner, { lease_until: leaseUntil });
  }

  /** Changes a running recovery `owner` holds; false when it is no longer its own. */
  private async updateOwned(id: string, owner: string, set: RecoveryUpdate, ex: Executor<WebhooksDb> = this.db): Promise<boolean> {
    const row = await ex.updateTable('recoveries').set(set).where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'running').returning('id').executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Notes progress and renews the lease, in the transaction that queued the events: false
   * when the recovery is no longer this owner's (deleted with its endpoint, or its lease ran
   * out and another instance took it), and then nothing of the transaction should stand.
   */
  async progress(id: string, owner: string, p: { queued: number; nextSeq: number; leaseUntil: Date; now: Date }, ex: Executor<WebhooksDb>): Promise<boolean> {
    return this.updateOwned(id, owner, (eb) => ({ queued: eb('queued', '+', p.queued), next_seq: p.nextSeq, failures: 0, lease_until: p.leaseUntil, updated_at: p.now }), ex);
  }

  /** Ends a recovery this owner holds: finished, or failed with the reason. */
  async finish(id: string, owner: string, end: { status: 'finished' | 'failed'; error?: string; now: Date }): Promise<void> {
    await this.db
      .updateTable('recoveries')
      .set({ status: end.status, error: end.error ?? null, lease_owner: null, lease_until: null, updated_at: end.now, finished_at: end.now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .execute();
  }

  /**
   * A run that failed (the stream or the database unreachable): given up with `error` at
   * `maxFailures` failures in a row, else left for any instance to take again at `retryAt`.
   */
  async failedRun(id: string, owner: string, f: { error: string; maxFailures: number; retryAt: Date; now: Date }): Promise<'retry' | 'failed'> {
    const row = await this.db
      .updateTable('recoveries')
      .set((eb) => ({
        failures: eb('failures', '+', 1),
        status: sql<'running' | 'failed'>`case when failures + 1 >= ${f.maxFailures} then 'failed' else 'running' end`,
        error: sql<string | null>`case when failures + 1 >= ${f.maxFailures} then ${f.error} end`,
        finished_at: sql<Date | null>`case when failures + 1 >= ${f.maxFailures} then ${f.now}::timestamptz end`,
        lease_owner: null,
        lease_until: f.retryAt,
        updated_at: f.now,
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .returning('status')
      .executeTakeFirst();
    return row?.status === 'failed' ? 'failed' : 'retry';
  }

  /** Gives up this owner's leases (shutdown): the recoveries resume elsewhere, or here after a restart, where they were. */
  async release(owner: string): Promise<void> {
    await this.db.updateTable('recoveries').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner).where('status', '=', 'running').execute();
  }
}
