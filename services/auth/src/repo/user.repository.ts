/** Users, sessions and refresh tokens. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, RefreshTokenTable, SessionTable, UserTable } from './tables';

export type UserRow = Selectable<UserTable>;
export type SessionRow = Selectable<SessionTable>;
export type RefreshTokenRow = Selectable<RefreshTokenTable>;

export class UserRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** false: an account has this email, live or deleted and not yet purged (the only unique key a new id can meet). */
  async insertUser(
    row: { id: string; email: string; password_hash: string | null; name: string | null; now: Date; email_verified_at?: Date | null },
    ex: Executor<AuthDb> = this.db,
  ): Promise<boolean> {
    const result = await ex
      .insertInto('users')
      .values({ id: row.id, email: row.email, password_hash: row.password_hash, name: row.name, email_verified_at: row.email_verified_at ?? null, created_at: row.now, updated_at: row.now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return result.numInsertedOrUpdatedRows === 1n;
  }

  findLiveByEmail(email: string, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex.selectFrom('users').selectAll().where('email', '=', email).where('deleted_at', 'is', null).executeTakeFirst();
  }

  findLiveById(id: string, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /** Live accounts among these ids (names and emails for lists of members). */
  findProfiles(ids: readonly string[], ex: Executor<AuthDb> = this.db): Promise<Pick<UserRow, 'id' | 'email' | 'name' | 'email_verified_at'>[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return ex.selectFrom('users').select(['id', 'email', 'name', 'email_verified_at']).where('id', 'in', ids).where('deleted_at', 'is', null).execute();
  }

  /** The account after the change; undefined when it is not live. */
  updateName(id: string, name: string | null, now: Date, ex: Executor<AuthDb> = this.db): Promise<UserRow | undefined> {
    return ex.updateTable('users').set({ name, updated_at: now }).where('id', '=', id).where('deleted_at', 'is', null).returningAll().executeTakeFirst();
  }

  async updatePasswordHash(id: string, hash: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('users').set({ password_hash: hash, updated_at: now }).where('id', '=', id).execute();
  }

  async insertSession(row: Omit<SessionRow, 'revoked_at' | 'revoked_reason'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('sessions').values(row).execute();
  }

  findSession(id: string, ex: Executor<AuthDb> = this.db): Promise<SessionRow | undefined> {
    return ex.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findSessionOfUser(userId: string, id: string, ex: Executor<AuthDb> = this.db): Promise<SessionRow | undefined> {
    return ex.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  }

  /** The person's sessions neither revoked nor expired at `now`, newest first; `before` is the last id of the previous page. */
  listLiveSessions(userId: string, now: Date, opts: { limit: number; before?: string | undefined }, ex: Executor<AuthDb> = this.db): Promise<SessionRow[]> {
    let q = ex.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** Revokes the person's sessions live at `now` but `keep`; returns those this call revoked. */
  revokeSessionsOfUser(userId: string, keep: string, reason: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<Pick<SessionRow, 'id' | 'user_id'>[]> {
    return ex
      .updateTable('sessions')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('user_id', '=', userId)
      .where('id', '<>', keep)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['id', 'user_id'])
      .execute();
  }

  /** Returns whether this call revoked it (false when it already was). */
  async revokeSession(id: string, reason: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('sessions')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Records a refresh (when, from where, until when); false when the session was revoked meanwhile. */
  async touchSession(
    id: string,
    use: { now: Date; expiresAt: Date; ip: string | null; userAgent: string | null },
    ex: Executor<AuthDb> = this.db,
  ): Promise<boolean> {
    const res = await ex
      .updateTable('sessions')
      .set({ last_refreshed_at: use.now, expires_at: use.expiresAt, ip: use.ip, user_agent: use.userAgent })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async insertRefreshToken(row: Omit<RefreshTokenRow, 'used_at'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('refresh_tokens').values(row).execute();
  }

  findRefreshToken(hash: Buffer, ex: Executor<AuthDb> = this.db): Promise<RefreshTokenRow | undefined> {
    return ex.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  /** Marks a refresh token used; false when another request used it first. */
  async useRefreshToken(hash: Buffer, now: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('refresh_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
