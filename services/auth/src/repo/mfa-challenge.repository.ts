/** Logins waiting for their second factor (mfa_challenges): the mfa_token as its SHA-256. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, MfaChallengeTable } from './tables';

export type MfaChallengeRow = Selectable<MfaChallengeTable>;

export class MfaChallengeRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  async insert(row: Omit<MfaChallengeRow, 'attempts' | 'used_at'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('mfa_challenges').values(row).execute();
  }

  /** Deletes the person's challenges that ended before `before` (they can do nothing more). */
  async deleteEnded(userId: string, before: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('mfa_challenges').where('user_id', '=', userId).where('expires_at', '<=', before).execute();
  }

  /**
   * Counts one attempt at the challenge of this token while it is unused, unexpired and has
   * attempts left (the caller's limits), and returns it as it is after; undefined when there
   * is none. Its own statement, before the code is compared: a wrong code counts whatever
   * becomes of the request, and concurrent attempts each count.
   */
  countAttempt(tokenHash: Buffer, live: { attemptsBelow: number; now: Date }, ex: Executor<AuthDb> = this.db): Promise<MfaChallengeRow | undefined> {
    return ex
      .updateTable('mfa_challenges')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('attempts', '<', live.attemptsBelow)
      .where('expires_at', '>', live.now)
      .returningAll()
      .executeTakeFirst();
  }

  /** Marks it used; false when it was used already (of two at once, one wins). */
  async use(tokenHash: Buffer, now: Date, ex: Executor<AuthDb>): Promise<boolean> {
    const res = await ex.updateTable('mfa_challenges').set({ used_at: now }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
