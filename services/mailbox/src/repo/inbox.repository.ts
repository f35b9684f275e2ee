/** Inboxes; every tenant read filters on org_id and env_id, and never sees deleted ones. */
import type { Tenant } from '@mailroom/contracts';
import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { InboxTable, MailboxDb } from './tables';

export type InboxRow = Selectable<InboxTable>;
export class InboxRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  /**
   * Inserts the inbox unless its environment is recorded as deleted (deleted_environments) or
   * a live inbox has its address (the only unique key a new id can meet), in one statement;
   * what stopped it otherwise.
   */
  async insert(row: Omit<InboxRow, 'deleted_at'>, ex: Executor<MailboxDb> = this.db): Promise<'inserted' | 'address_taken' | 'environment_deleted'> {
    const result = await ex
      .with('gone', (db) => db.selectFrom('deleted_environments').select('env_id').where('org_id', '=', row.org_id).where('env_id', '=', row.env_id))
      .with('inserted', (db) =>
        db
          .insertInto('inboxes')
          .columns(['id', 'org_id', 'env_id', 'username', 'domain', 'address', 'display_name', 'status', 'created_at', 'updated_at'])
          .expression(
            db
              .selectNoFrom((eb) => [
                eb.val(row.id).as('id'),
                eb.val(row.org_id).as('org_id'),
                eb.val(row.env_id).as('env_id'),
                eb.val(row.username).as('username'),
                eb.val(row.domain).as('domain'),
                eb.val(row.address).as('address'),
                eb.val(row.display_name).as('display_name'),
                eb.val(row.status).as('status'),
                eb.val(row.created_at).as('created_at'),
                eb.val(row.updated_at).as('updated_at'),
              ])
              .where((eb) => eb.not(eb.exists(eb.selectFrom('gone').select('env_id')))),
          )
          .onConflict((oc) => oc.doNothing())
          .returning('id'),
      )
      .selectNoFrom((eb) => [eb.exists(eb.selectFrom('inserted').select('id')).as('inserted'), eb.exists(eb.selectFrom('gone').select('env_id')).as('gone')])
      .executeTakeFirstOrThrow();
    if (result.inserted) return 'inserted';
    return result.gone ? 'environment_deleted' : 'address_taken';
  }

  /**
   * Holds the organization's inbox creations one at a time until the transaction `trx` ends:
   * the plan's count and the insert are made under it, so two at once cannot both see room.
   */
  async lockOrganization(orgId: string, trx: Executor<MailboxDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`mailbox.inboxes:${orgId}`}, 0))`.execute(trx);
  }

  /** Live inboxes of one environment (an environment is deleted only without any). */
  async countLive(t: Tenant, ex: Executor<MailboxDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('inboxes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Live inboxes of the organization, every environment: what the plan's `inboxes` limit and the usage count (index inboxes_by_tenant). */
  async countLiveInOrg(orgId: string, ex: Executor<MailboxDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('inboxes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', orgId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Live inboxes of one environment on a domain, oldest first (index inboxes_by_tenant, then the domain compared). */
  listLiveOnDomain(t: Tenant, domain: string, limit: number, ex: Executor<MailboxDb> = this.db): Promise<InboxRow[]> {
    return ex
      .selectFrom('inboxes')
      .selectAll()
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('domain', '=', domain)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async countLiveOnDomain(t: Tenant, domain: string, ex: Executor<MailboxDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('inboxes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('domain', '=', domain)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(t: Tenant, id: string, ex: Executor<MailboxDb> = this.db): Promise<InboxRow | undefined> {
    return ex
      .selectFrom('inboxes')
      .selectAll()
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(t: Tenant, limit: number, before: string | undefined, ex: Executor<MailboxDb> = this.db): Promise<InboxRow[]> {
    let q = ex.selectFrom('inboxes').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('deleted_at', 'is', null);
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  async update(t: Tenant, id: string, set: Partial<Pick<InboxRow, 'display_name' | 'status'>>, now: Date, ex: Executor<MailboxDb> = this.db): Promise<InboxRow | undefined> {
    return ex
      .updateTable('inboxes')
      .set({ ...set, updated_at: now })
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  async softDelete(t: Tenant, id: string, now: Date, ex: Executor<MailboxDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('inboxes')
      .set({ deleted_at: now, updated_at: now })
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Deletes every live inbox of one environment as softDelete does one; the ids of those it deleted. */
  async softDeleteAllIn(t: Tenant, now: Date, ex: Executor<MailboxDb> = this.db): Promise<string[]> {
    const rows = await ex
      .updateTable('inboxes')
      .set({ deleted_at: now, updated_at: now })
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('deleted_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** For the SMTP edge: the live inbox behind an address, whoever owns it. */
  findLiveByAddress(address: string, ex: Executor<MailboxDb> = this.db): Promise<InboxRow | undefined> {
    return ex.selectFrom('inboxes').selectAll().where('address', '=', address).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /** For the inbound consumer: the inbox that had `address` at `at` (created by then, not yet deleted), whoever owns it. */
  ownerAt(address: string, at: Date, ex: Executor<MailboxDb> = this.db): Promise<InboxRow | undefined> {
    return ex
      .selectFrom('inboxes')
      .selectAll()
      .where('address', '=', address)
      .where('created_at', '<=', at)
      .where((eb) => eb.or([eb('deleted_at', 'is', null), eb('deleted_at', '>', at)]))
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** For the inbound consumer: the inbox a work item names, deleted or not (accepted mail is never dropped). */
  findAnyById(id: string, ex: Executor<MailboxDb> = this.db): Promise<InboxRow | undefined> {
    return ex.selectFrom('inboxes').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
