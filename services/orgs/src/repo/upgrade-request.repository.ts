/**
 * Queries of upgrade requests; every one filters on org_id, except the lookup of a platform
 * operator's decision (an operator decides for any organization, by the request's id).
 */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { OrgsDb, UpgradeRequestTable } from './tables';

export type UpgradeRequestRow = Selectable<UpgradeRequestTable>;
export type UpgradeDecision = Exclude<UpgradeRequestRow['status'], 'pending'>;

export class UpgradeRequestRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** False when the organization has a pending request already (one pending per organization: the index). */
  async insert(row: UpgradeRequestRow, ex: Executor<OrgsDb>): Promise<boolean> {
    const made = await ex.insertInto('upgrade_requests').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
    return made !== undefined;
  }

  findPending(orgId: string, ex: Executor<OrgsDb> = this.db): Promise<UpgradeRequestRow | undefined> {
    return ex.selectFrom('upgrade_requests').selectAll().where('org_id', '=', orgId).where('status', '=', 'pending').executeTakeFirst();
  }

  find(orgId: string, id: string, ex: Executor<OrgsDb> = this.db): Promise<UpgradeRequestRow | undefined> {
    return ex.selectFrom('upgrade_requests').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(orgId: string, opts: { limit: number; before?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<UpgradeRequestRow[]> {
    let q = ex.selectFrom('upgrade_requests').selectAll().where('org_id', '=', orgId);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** Every organization's requests, newest first, of one status and organization when given: a platform operator's list. */
  listAll(opts: { limit: number; before?: string | undefined; status?: UpgradeRequestRow['status'] | undefined; org_id?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<UpgradeRequestRow[]> {
    let q = ex.selectFrom('upgrade_requests').selectAll();
    if (opts.status) q = q.where('status', '=', opts.status);
    if (opts.org_id) q = q.where('org_id', '=', opts.org_id);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** For a platform operator's decision: the request, whichever organization's, not locked (its organization is locked first). */
  findForDecision(id: string, ex: Executor<OrgsDb> = this.db): Promise<UpgradeRequestRow | undefined> {
    return ex.selectFrom('upgrade_requests').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The request, locked until the caller's transaction ends: of two decisions at once, one decides. */
  lock(orgId: string, id: string, ex: Executor<OrgsDb>): Promise<UpgradeRequestRow | undefined> {
    return ex.selectFrom('upgrade_requests').selectAll().where('org_id', '=', orgId).where('id', '=', id).forUpdate().executeTakeFirst();
  }

  /** Moves a pending request to its decision; false when it was no longer pending. */
  async decide(orgId: string, id: string, set: { status: UpgradeDecision; at: Date; note: string | null }, ex: Executor<OrgsDb>): Promise<boolean> {
    const res = await ex
      .updateTable('upgrade_requests')
      .set({ status: set.status, decided_at: set.at, decision_note: set.note })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
