/** Suspended accounts: a row while an account is suspended; one query per method. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, UserSuspensionTable } from './tables';

export type UserSuspensionRow = Selectable<UserSuspensionTable>;

export class UserSuspensionRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  find(userId: string, ex: Executor<AuthDb> = this.db): Promise<UserSuspensionRow | undefined> {
    return ex.selectFrom('user_suspensions').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /**
   * When the account was suspended (null: it is not), read under a share lock on the account's
   * row: a session written in the same transaction and a suspension (which locks the row for
   * update, `lockAccount`) are taken one after the other, never both past each other.
   */
  async suspendedAtLocked(userId: string, tx: Executor<AuthDb>): Promise<Date | null> {
    const row = await tx
      .selectFrom('users as u')
      .leftJoin('user_suspensions as s', 's.user_id', 'u.id')
      .select('s.suspended_at')
      .where('u.id', '=', userId)
      .forShare('u')
      .executeTakeFirst();
    return row?.suspended_at ?? null;
  }

  /** Locks the account's row for a suspension (see suspendedAtLocked). */
  async lockAccount(userId: string, tx: Executor<AuthDb>): Promise<void> {
    await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
  }

  /** Suspends the account unless it is already: whether this did. */
  async insert(row: UserSuspensionRow, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.insertInto('user_suspensions').values(row).onConflict((oc) => oc.column('user_id').doNothing()).executeTakeFirst();
    return res.numInsertedOrUpdatedRows === 1n;
  }

  /** Lifts the suspension: the row it was, undefined when the account was not suspended. */
  delete(userId: string, ex: Executor<AuthDb> = this.db): Promise<UserSuspensionRow | undefined> {
    return ex.deleteFrom('user_suspensions').where('user_id', '=', userId).returningAll().executeTakeFirst();
  }
}
