/**
 * Accounts in any state (live or deleted, until purged): deletion, restoration, recovery
 * tokens and the purge. The recovery window is the domain's (domain/account-deletion.ts): it
 * is given to these queries as the instant a deletion must be after, or at or before.
 */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, RecoveryTokenTable } from './tables';
import type { UserRow } from './user.repository';

export type RecoveryTokenRow = Selectable<RecoveryTokenTable>;

export class DeletedAccountRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** The account of this address, live or deleted (an address has one account until the purge). */
  findByEmail(email: string, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  findById(id: string, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Marks a live account deleted; false when it is not live. */
  async markDeleted(id: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.updateTable('users').set({ deleted_at: now, updated_at: now }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Makes an account deleted after `deletedAfter` live again; the account as it is then, undefined when there was none. */
  restore(id: string, deletedAfter: Date, now: Date, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex
      .updateTable('users')
      .set({ deleted_at: null, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', '>', deletedAfter)
      .returningAll()
      .executeTakeFirst();
  }

  async insertRecoveryToken(row: Omit<RecoveryTokenRow, 'used_at'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('recovery_tokens').values(row).execute();
  }

  findRecoveryToken(hash: Buffer, ex: Executor<AuthDb> = this.db): Promise<RecoveryTokenRow | undefined> {
    return ex.selectFrom('recovery_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  /** Marks the token used; false when it was used already (a token works once, even at the same moment). */
  async useRecoveryToken(hash: Buffer, now: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.updateTable('recovery_tokens').set({ used_at: now }).where('token_hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Ids of accounts deleted at or before `deletedBy`, by id, after `after`: one page of the purge. */
  async deletedBy(deletedBy: Date, opts: { limit: number; after?: string | undefined }, ex: Executor<AuthDb> = this.db): Promise<string[]> {
    let q = ex.selectFrom('users').select('id').where('deleted_at', '<=', deletedBy);
    if (opts.after) q = q.where('id', '>', opts.after);
    const rows = await q.orderBy('id').limit(opts.limit).execute();
    return rows.map((r) => r.id);
  }

  /**
   * Deletes the account if it was deleted at or before `deletedBy` (its sessions, refresh
   * tokens, codes and recovery tokens go with it); false when it was not (recovered meanwhile).
   */
  async purge(id: string, deletedBy: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('users').where('id', '=', id).where('deleted_at', '<=', deletedBy).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
