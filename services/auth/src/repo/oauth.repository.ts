/** Outside providers' sign-in and link attempts, and the identities linked to accounts. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, OAuthAttemptTable, OAuthIdentityTable } from './tables';

export type OAuthAttemptRow = Selectable<OAuthAttemptTable>;
export type OAuthIdentityRow = Selectable<OAuthIdentityTable>;

export class OAuthRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  async insertAttempt(row: Omit<OAuthAttemptRow, 'used_at'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('oauth_attempts').values(row).execute();
  }

  /** Marks the attempt of this state used and returns it; undefined when there is none or it was used already. */
  takeAttempt(stateHash: Buffer, now: Date, ex: Executor<AuthDb> = this.db): Promise<OAuthAttemptRow | undefined> {
    return ex.updateTable('oauth_attempts').set({ used_at: now }).where('state_hash', '=', stateHash).where('used_at', 'is', null).returningAll().executeTakeFirst();
  }

  async deleteAttemptsExpiredBefore(before: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('oauth_attempts').where('expires_at', '<', before).execute();
  }

  findIdentity(provider: string, subject: string, ex: Executor<AuthDb> = this.db): Promise<OAuthIdentityRow | undefined> {
    return ex.selectFrom('oauth_identities').selectAll().where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
  }

  /** The person's linked identities, oldest link first. */
  listIdentities(userId: string, ex: Executor<AuthDb> = this.db): Promise<OAuthIdentityRow[]> {
    return ex.selectFrom('oauth_identities').selectAll().where('user_id', '=', userId).orderBy('linked_at').orderBy('provider').execute();
  }

  /** False when the identity is linked already, or the person has one of this provider (either unique key). */
  async insertIdentity(row: OAuthIdentityRow, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const made = await ex.insertInto('oauth_identities').values(row).onConflict((oc) => oc.doNothing()).returning('subject').executeTakeFirst();
    return made !== undefined;
  }

  /** Records a sign-in with the identity, and the address the provider gave this time. */
  async touchIdentity(provider: string, subject: string, use: { email: string | null; now: Date }, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('oauth_identities').set({ email: use.email, last_used_at: use.now }).where('provider', '=', provider).where('subject', '=', subject).execute();
  }

  /** Whether the person had an identity of this provider. */
  async deleteIdentity(userId: string, provider: string, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('oauth_identities').where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  async deleteIdentitiesOf(userId: string, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('oauth_identities').where('user_id', '=', userId).execute();
  }

  /**
   * Locks the account's row until the transaction ends, and returns whether it has a password:
   * two unlinks at once cannot each see the other's link as the remaining way to sign in.
   */
  async lockAccount(userId: string, ex: Executor<AuthDb>): Promise<{ has_password: boolean } | undefined> {
    const row = await ex.selectFrom('users').select('password_hash').where('id', '=', userId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
    return row && { has_password: row.password_hash !== null };
  }
}
