/** Queries of ownership transfer requests; every one filters on org_id. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { OrgsDb, OwnershipTransferTable } from './tables';

export type OwnershipTransferRow = Selectable<OwnershipTransferTable>;
export type DecidedStatus = Exclude<OwnershipTransferRow['status'], 'pending'>;

export class OwnershipTransferRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  async insert(row: OwnershipTransferRow, ex: Executor<OrgsDb>): Promise<void> {
    await ex.insertInto('ownership_transfers').values(row).execute();
  }

  /** The organization's pending request (expired or not), if any. */
  findPending(orgId: string, ex: Executor<OrgsDb> = this.db): Promise<OwnershipTransferRow | undefined> {
    return ex.selectFrom('ownership_transfers').selectAll().where('org_id', '=', orgId).where('status', '=', 'pending').executeTakeFirst();
  }

  /** The request, locked until the caller's transaction ends: accept and cancel are decided one after the other. */
  lock(orgId: string, id: string, ex: Executor<OrgsDb>): Promise<OwnershipTransferRow | undefined> {
    return ex.selectFrom('ownership_transfers').selectAll().where('org_id', '=', orgId).where('id', '=', id).forUpdate().executeTakeFirst();
  }

  /** Moves a pending request to its end; false when it was no longer pending. */
  async decide(orgId: string, id: string, status: DecidedStatus, at: Date, ex: Executor<OrgsDb>): Promise<boolean> {
    const res = await ex
      .updateTable('ownership_transfers')
      .set({ status, decided_at: at })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
