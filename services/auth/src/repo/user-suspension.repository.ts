/** Suspended accounts: a row while an account is suspended; one query per method. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, UserSuspensionTable } from './tables';

export type UserSuspensionRow = Selectable<UserSuspensionTable>;

export class UserSuspensionRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  find(userId: string, ex: Executor<AuthDb> = this.db): Promise<UserSuspensionRow | undefined> {
    return ex.selectFrom('user_suspensions').selectAll().where('user_id', '=', userId).executeTakeFirst();
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
