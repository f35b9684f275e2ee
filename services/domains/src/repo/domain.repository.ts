/** Domains: one query per method; every tenant read filters on org_id and env_id. */
import type { Tenant } from '@mailroom/contracts';
import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { DomainTable, DomainsDb } from './tables';

export type DomainRow = Selectable<DomainTable>;
export type NewDomainRow = Pick<DomainRow, 'id' | 'org_id' | 'env_id' | 'name' | 'dkim_selector' | 'dkim_public_key' | 'dkim_private_key_sealed' | 'created_at' | 'next_check_at'>;
/** What a check writes. */
export type CheckedFields = Pick<DomainRow, 'status' | 'failure_reason' | 'verified_at' | 'last_checked_at' | 'next_check_at' | 'consecutive_failures'> & {
  checks: string;
  verified_event_id?: string;
} & Partial<PromotedKey>;
/** A rotation's key made the current one: its columns moved, the rotation's cleared. */
export type PromotedKey = Pick<DomainRow, 'dkim_selector' | 'dkim_public_key' | 'dkim_private_key_sealed'> & {
  dkim_next_selector: null;
  dkim_next_public_key: null;
  dkim_next_private_key_sealed: null;
  dkim_next_created_at: null;
};
export type NextKey = Pick<DomainRow, 'dkim_next_selector' | 'dkim_next_public_key' | 'dkim_next_private_key_sealed'> & { dkim_next_created_at: Date; next_check_at: Date };

export class DomainRepository {
  constructor(private readonly db: Kysely<DomainsDb>) {}

  /**
   * Inserts the domain unless its environment is recorded as deleted or the environment has the
   * name already, in one statement; what stopped it otherwise.
   */
  async insert(row: NewDomainRow, ex: Executor<DomainsDb> = this.db): Promise<'inserted' | 'name_taken' | 'environment_deleted'> {
    const result = await ex
      .with('gone', (db) => db.selectFrom('deleted_environments').select('env_id').where('org_id', '=', row.org_id).where('env_id', '=', row.env_id))
      .with('inserted', (db) =>
        db
          .insertInto('domains')
          .columns(['id', 'org_id', 'env_id', 'name', 'dkim_selector', 'dkim_public_key', 'dkim_private_key_sealed', 'created_at', 'next_check_at'])
          .expression(
            db
              .selectNoFrom((eb) => [
                eb.val(row.id).as('id'),
                eb.val(row.org_id).as('org_id'),
                eb.val(row.env_id).as('env_id'),
                eb.val(row.name).as('name'),
                eb.val(row.dkim_selector).as('dkim_selector'),
                eb.val(row.dkim_public_key).as('dkim_public_key'),
                eb.val(row.dkim_private_key_sealed).as('dkim_private_key_sealed'),
                eb.val(row.created_at).as('created_at'),
                eb.val(row.next_check_at).as('next_check_at'),
              ])
              .where((eb) => eb.not(eb.exists(eb.selectFrom('gone').select('env_id')))),
          )
          .onConflict((oc) => oc.doNothing())
          .returning('id'),
      )
      .selectNoFrom((eb) => [eb.exists(eb.selectFrom('inserted').select('id')).as('inserted'), eb.exists(eb.selectFrom('gone').select('env_id')).as('gone')])
      .executeTakeFirstOrThrow();
    if (result.inserted) return 'inserted';
    return result.gone ? 'environment_deleted' : 'name_taken';
  }

  /** Holds the organization's domain creations one at a time until `trx` ends (the plan's count and the insert run under it). */
  async lockOrganization(orgId: string, trx: Executor<DomainsDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`domains.org:${orgId}`}, 0))`.execute(trx);
  }

  /** Holds every creation and verification of one name until `trx` ends, so two organizations cannot both hold it verified. */
  async lockName(name: string, trx: Executor<DomainsDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`domains.name:${name}`}, 0))`.execute(trx);
  }

  /** Whether an organization other than `orgId` has the name verified (index domains_verified_by_name). */
  async verifiedElsewhere(name: string, orgId: string, ex: Executor<DomainsDb> = this.db): Promise<boolean> {
    const row = await ex.selectFrom('domains').select('id').where('name', '=', name).where('status', '=', 'verified').where('org_id', '<>', orgId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Domains of the organization, every environment: what the plan's `domains` limit and the usage count. */
  async countInOrg(orgId: string, ex: Executor<DomainsDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('domains').select((eb) => eb.fn.countAll<string>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Domains of every organization in status failed whose last check was at or after `since`. */
  async countFailedSince(since: Date): Promise<number> {
    const row = await this.db
      .selectFrom('domains')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'failed')
      .where('last_checked_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async countIn(t: Tenant, ex: Executor<DomainsDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('domains')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(t: Tenant, id: string, ex: Executor<DomainsDb> = this.db): Promise<DomainRow | undefined> {
    return ex.selectFrom('domains').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).executeTakeFirst();
  }

  /** Stores a rotation's new key unless one is pending already; the row, or undefined (not found or a rotation pending). */
  startRotation(t: Tenant, id: string, next: NextKey, ex: Executor<DomainsDb> = this.db): Promise<DomainRow | undefined> {
    return ex
      .updateTable('domains')
      .set(next)
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', '=', id)
      .where('dkim_next_selector', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(t: Tenant, limit: number, before: string | undefined, ex: Executor<DomainsDb> = this.db): Promise<DomainRow[]> {
    let q = ex.selectFrom('domains').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id);
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** The row, locked until `trx` ends, for recording a check (any tenant: the job's). */
  lockById(id: string, trx: Executor<DomainsDb>): Promise<DomainRow | undefined> {
    return trx.selectFrom('domains').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  }

  async recordCheck(id: string, fields: CheckedFields, trx: Executor<DomainsDb>): Promise<DomainRow | undefined> {
    return trx
      .updateTable('domains')
      .set({ ...fields, lease_owner: null, lease_until: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Takes up to `limit` domains due for a check that no live lease holds (oldest due first),
   * leased to `owner` until `until`; instances running this at once take different rows.
   */
  claimDue(owner: string, now: Date, until: Date, limit: number, ex: Executor<DomainsDb> = this.db): Promise<DomainRow[]> {
    return ex
      .updateTable('domains')
      .set({ lease_owner: owner, lease_until: until })
      .where('id', 'in', (db) =>
        db
          .selectFrom('domains')
          .select('id')
          .where('next_check_at', '<=', now)
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
          .orderBy('next_check_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute();
  }

  /** Gives a lease back without a record (a check that could not be recorded), so another instance may take it at once. */
  async release(id: string, owner: string, ex: Executor<DomainsDb> = this.db): Promise<void> {
    await ex.updateTable('domains').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
  }

  /** Sets or clears the catch-all (both columns together); the row as it then is. */
  setCatchAll(t: Tenant, id: string, to: Pick<DomainRow, 'catch_all_inbox_id' | 'catch_all_address'>, ex: Executor<DomainsDb> = this.db): Promise<DomainRow | undefined> {
    return ex.updateTable('domains').set(to).where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Whether another row of the name in the organization (another environment's) has a catch-all. */
  async catchAllElsewhere(name: string, orgId: string, id: string, ex: Executor<DomainsDb> = this.db): Promise<boolean> {
    const row = await ex.selectFrom('domains').select('id').where('name', '=', name).where('org_id', '=', orgId).where('id', '<>', id).where('catch_all_inbox_id', 'is not', null).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** The verified rows among `names` (of `orgId` when given): which organization verified each (single sign-on admits their addresses). */
  verifiedNames(names: readonly string[], orgId: string | undefined, ex: Executor<DomainsDb> = this.db): Promise<{ name: string; org_id: string }[]> {
    let q = ex.selectFrom('domains').select(['name', 'org_id']).distinct().where('name', 'in', [...names]).where('status', '=', 'verified');
    if (orgId !== undefined) q = q.where('org_id', '=', orgId);
    return q.execute();
  }

  /** Every row of the name that was ever verified, any tenant: what mail-ingest is told about it. */
  servedRows(name: string, ex: Executor<DomainsDb> = this.db): Promise<Pick<DomainRow, 'org_id' | 'status' | 'catch_all_address' | 'verified_at'>[]> {
    return ex.selectFrom('domains').select(['org_id', 'status', 'catch_all_address', 'verified_at']).where('name', '=', name).where('verified_at', 'is not', null).execute();
  }

  findByName(t: Tenant, name: string, ex: Executor<DomainsDb> = this.db): Promise<DomainRow | undefined> {
    return ex.selectFrom('domains').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('name', '=', name).executeTakeFirst();
  }

  delete(t: Tenant, id: string, ex: Executor<DomainsDb> = this.db): Promise<DomainRow | undefined> {
    return ex.deleteFrom('domains').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Deletes every domain of one environment; the rows deleted. */
  deleteAllIn(t: Tenant, ex: Executor<DomainsDb> = this.db): Promise<DomainRow[]> {
    return ex.deleteFrom('domains').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).returningAll().execute();
  }
}
