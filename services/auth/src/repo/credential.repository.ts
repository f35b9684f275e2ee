/** What a verification or a password change writes on the account and its sessions. */
import { isUniqueViolation, type Executor, type Kysely } from '@mailroom/db';
import type { AuthDb } from './tables';
import type { UserRow } from './user.repository';

export class CredentialRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** The first verification's time stays. */
  async markEmailVerified(userId: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('users').set({ email_verified_at: now, updated_at: now }).where('id', '=', userId).where('email_verified_at', 'is', null).execute();
  }

  /** The account no longer signs in with a password (an outside provider's proof of the address replaced it). */
  async removePassword(userId: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('users').set({ password_hash: null, updated_at: now }).where('id', '=', userId).execute();
  }

  /** Revokes every live session of the person but `except`; the ids of those it revoked. */
  async revokeSessionsOf(userId: string, opts: { reason: string; now: Date; except?: string | undefined }, ex: Executor<AuthDb> = this.db): Promise<string[]> {
    let q = ex.updateTable('sessions').set({ revoked_at: opts.now, revoked_reason: opts.reason }).where('user_id', '=', userId).where('revoked_at', 'is', null);
    if (opts.except !== undefined) q = q.where('id', '!=', opts.except);
    const rows = await q.returning('id').execute();
    return rows.map((r) => r.id);
  }

  /**
   * Moves a live account to a new address, verified by the mail that confirmed it; undefined
   * when another account holds the address (the unique index, whatever the state of that
   * account) or this one is not live.
   */
  async changeEmail(userId: string, email: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    try {
      return await ex
        .updateTable('users')
        .set({ email, email_verified_at: now, updated_at: now })
        .where('id', '=', userId)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    } catch (err) {
      if (isUniqueViolation(err, 'users_email')) return undefined;
      throw err;
    }
  }
}
