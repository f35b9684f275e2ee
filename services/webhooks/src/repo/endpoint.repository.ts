/** Webhook endpoints. Every read and write is scoped to the tenant (org and environment). */
import type { Tenant } from '@mailroom/contracts';
import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { EndpointTable, WebhooksDb } from './tables';

export type EndpointRow = Selectable<EndpointTable>;
export class EndpointRepository {
  constructor(private readonly db: Kysely<WebhooksDb>) {}

  /**
   * Inserts the endpoint unless its environment is recorded as deleted (deleted_environments),
   * in one statement: false when it is, and nothing was inserted.
   */
  async insert(row: Omit<EndpointRow, 'disabled' | 'disabled_reason' | 'disabled_at' | 'consecutive_failures'>, ex: Executor<WebhooksDb> = this.db): Promise<boolean> {
    const res = await ex
      .insertInto('endpoints')
      .columns(['id', 'org_id', 'env_id', 'url', 'event_types', 'inbox_ids', 'description', 'secret_sealed', 'created_at', 'updated_at'])
      .expression(
        ex
          .selectNoFrom((eb) => [
            eb.val(row.id).as('id'),
            eb.val(row.org_id).as('org_id'),
            eb.val(row.env_id).as('env_id'),
            eb.val(row.url).as('url'),
            eb.val(row.event_types).as('event_types'),
            eb.val(row.inbox_ids).as('inbox_ids'),
            eb.val(row.description).as('description'),
            eb.val(row.secret_sealed).as('secret_sealed'),
            eb.val(row.created_at).as('created_at'),
            eb.val(row.updated_at).as('updated_at'),
          ])
          .where((eb) => eb.not(eb.exists(eb.selectFrom('deleted_environments').select('env_id').where('org_id', '=', row.org_id).where('env_id', '=', row.env_id)))),
      )
      .executeTakeFirst();
    return res.numInsertedOrUpdatedRows === 1n;
  }

  /**
   * Holds the organization's endpoint creations one at a time until the transaction `trx`
   * ends: the counts (the environment's, the organization's) and the insert are made under
   * it, so two creations at once cannot both see room for one more.
   */
  async lockOrganization(orgId: string, trx: Executor<WebhooksDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${orgId}`}, 0))`.execute(trx);
  }

  /** Endpoints of one environment, disabled ones included (an environment is deleted only without any). */
  async count(t: Tenant, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Endpoints of the organization, every environment, disabled ones included: what the plan's `webhook_endpoints` limit and the usage count (index endpoints_by_tenant). */
  async countInOrg(orgId: string, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Endpoints of every organization disabled since `since` for a reason other than `except` (a user's). */
  async countDisabledSince(since: Date, except: string): Promise<number> {
    const row = await this.db
      .selectFrom('endpoints')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('disabled', '=', true)
      .where('disabled_at', '>=', since)
      .where('disabled_reason', 'is distinct from', except)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(t: Tenant, id: string, ex: Executor<WebhooksDb> = this.db): Promise<EndpointRow | undefined> {
    return ex.selectFrom('endpoints').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).executeTakeFirst();
  }

  /**
   * The tenant's endpoint, its row locked until the transaction `trx` ends: a change takes
   * the endpoint before the deliveries, in the order a record of attempts does, so the two
   * cannot deadlock.
   */
  findForUpdate(t: Tenant, id: string, trx: Executor<WebhooksDb>): Promise<EndpointRow | undefined> {
    return trx.selectFrom('endpoints').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
  }

  /** By id alone, for the service's own background work (a recovery runs for an endpoint it found by id). */
  byId(id: string, ex: Executor<WebhooksDb> = this.db): Promise<EndpointRow | undefined> {
    return ex.selectFrom('endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(t: Tenant, opts: { limit: number; before?: string | undefined }, ex: Executor<WebhooksDb> = this.db): Promise<EndpointRow[]> {
    let q = ex.selectFrom('endpoints').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  async update(
    t: Tenant,
    id: string,
    set: Partial<Pick<EndpointRow, 'url' | 'event_types' | 'inbox_ids' | 'description' | 'disabled' | 'disabled_reason' | 'disabled_at' | 'consecutive_failures' | 'updated_at'>>,
    ex: Executor<WebhooksDb> = this.db,
  ): Promise<EndpointRow | undefined> {
    return ex
      .updateTable('endpoints')
      .set(set)
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Deletes every endpoint of one environment; the ids of those it deleted. Locked in id
   * order first, the order a delivery record locks its endpoints in, so the two never wait
   * on each other in a cycle (a deadlock).
   */
  async deleteAllIn(t: Tenant, ex: Executor<WebhooksDb> = this.db): Promise<string[]> {
    const rows = await ex
      .deleteFrom('endpoints')
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', 'in', (eb) => eb.selectFrom('endpoints').select('id').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).orderBy('id').forUpdate())
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async delete(t: Tenant, id: string, ex: Executor<WebhooksDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('endpoints').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
