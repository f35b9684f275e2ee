/** The codes and link tokens of verification and password reset mails (one_time_codes). */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, OneTimeCodeTable } from './tables';

export type OneTimeCodeRow = Selectable<OneTimeCodeTable>;
export type CodePurpose = OneTimeCodeRow['purpose'];

export class OneTimeCodeRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** False when another open code of the person and purpose was made meanwhile (one open at a time). */
  async insert(row: Omit<OneTimeCodeRow, 'attempts' | 'closed_at' | 'closed_reason'>, ex: Executor<AuthDb>): Promise<boolean> {
    const made = await ex.insertInto('one_time_codes').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
    return made !== undefined;
  }

  /** Closes the open code of the person and purpose, if any (a new one replaces it). */
  async replaceOpen(userId: string, purpose: CodePurpose, now: Date, ex: Executor<AuthDb>): Promise<void> {
    await ex
      .updateTable('one_time_codes')
      .set({ closed_at: now, closed_reason: 'replaced' })
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('closed_at', 'is', null)
      .execute();
  }

  /** When the person's codes of this purpose made since `since` were made, oldest first. */
  async madeSince(userId: string, purpose: CodePurpose, since: Date, ex: Executor<AuthDb> = this.db): Promise<Date[]> {
    const rows = await ex
      .selectFrom('one_time_codes')
      .select('created_at')
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('created_at', '>', since)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => r.created_at);
  }

  findByTokenHash(purpose: CodePurpose, tokenHash: Buffer, ex: Executor<AuthDb> = this.db): Promise<OneTimeCodeRow | undefined> {
    return ex.selectFrom('one_time_codes').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose).executeTakeFirst();
  }

  /**
   * Counts one attempt at the open code of this purpose sent to `email`, for the live account
   * of that address, while it has attempts left and has not expired (the caller's limits),
   * and returns the row as it is after; undefined when there is none. The count is taken
   * before the code is compared, in its own statement: a wrong guess counts whatever becomes
   * of the request, and concurrent guesses each count. A dead code is not written to again.
   */
  countAttempt(purpose: CodePurpose, email: string, live: { attemptsBelow: number; now: Date }, ex: Executor<AuthDb> = this.db): Promise<OneTimeCodeRow | undefined> {
    return ex
      .updateTable('one_time_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('purpose', '=', purpose)
      .where('email', '=', email)
      .where('closed_at', 'is', null)
      .where('attempts', '<', live.attemptsBelow)
      .where('code_expires_at', '>', live.now)
      .where('user_id', 'in', (eb) => eb.selectFrom('users').select('id').where('email', '=', email).where('deleted_at', 'is', null))
      .returningAll()
      .executeTakeFirst();
  }

  /** Marks the code used; false when it was closed already (used or replaced meanwhile): a code works once. */
  async use(id: string, now: Date, ex: Executor<AuthDb>): Promise<boolean> {
    const res = await ex
      .updateTable('one_time_codes')
      .set({ closed_at: now, closed_reason: 'used' })
      .where('id', '=', id)
      .where('closed_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /**
   * As countAttempt, for the open code of this purpose of one account, whatever address it was
   * sent to (an email change code: the person is signed in, the code went to the new address).
   */
  countAttemptOfUser(purpose: CodePurpose, userId: string, live: { attemptsBelow: number; now: Date }, ex: Executor<AuthDb> = this.db): Promise<OneTimeCodeRow | undefined> {
    return ex
      .updateTable('one_time_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('purpose', '=', purpose)
      .where('user_id', '=', userId)
      .where('closed_at', 'is', null)
      .where('attempts', '<', live.attemptsBelow)
      .where('code_expires_at', '>', live.now)
      .returningAll()
      .executeTakeFirst();
  }
}
