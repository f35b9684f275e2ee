/** API keys; every read but the verification by hash is scoped to an organization. */
import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { ApiKeyTable, AuthDb } from './tables';

export type ApiKeyRow = Selectable<ApiKeyTable>;
const LIVE_COLUMNS = ['id', 'org_id', 'env_id', 'name', 'key_prefix', 'scope', 'permissions', 'created_by', 'created_at', 'last_used_at'] as const;
export type ApiKeyPublicRow = Pick<ApiKeyRow, (typeof LIVE_COLUMNS)[number]>;

export class ApiKeyRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** Live keys of one environment (an environment is deleted only without any). */
  async countLive(orgId: string, envId: string, ex: Executor<AuthDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', orgId)
      .where('env_id', '=', envId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Inserts the key unless its environment is recorded as deleted (deleted_environments), in
   * one statement: false when it is, and nothing was inserted.
   */
  async insert(row: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex
      .insertInto('api_keys')
      .columns(['id', 'org_id', 'env_id', 'name', 'key_hash', 'key_prefix', 'scope', 'permissions', 'created_by', 'created_at'])
      .expression(
        ex
          .selectNoFrom((eb) => [
            eb.val(row.id).as('id'),
            eb.val(row.org_id).as('org_id'),
            eb.val(row.env_id).as('env_id'),
            eb.val(row.name).as('name'),
            eb.val(row.key_hash).as('key_hash'),
            eb.val(row.key_prefix).as('key_prefix'),
            eb.val(row.scope).as('scope'),
            eb.val(row.permissions).as('permissions'),
            eb.val(row.created_by).as('created_by'),
            eb.val(row.created_at).as('created_at'),
          ])
          .where((eb) => eb.not(eb.exists(eb.selectFrom('deleted_environments').select('env_id').where('org_id', '=', row.org_id).where('env_id', '=', row.env_id)))),
      )
      .executeTakeFirst();
    return res.numInsertedOrUpdatedRows === 1n;
  }

  /**
   * The live key of this hash, with when its creator's account was deleted and when it was
   * suspended (null: it was not, or no creator is known).
   */
  findLiveByHash(
    hash: Buffer,
    ex: Executor<AuthDb> = this.db,
  ): Promise<(Pick<ApiKeyRow, 'id' | 'org_id' | 'env_id' | 'scope' | 'permissions'> & { creator_deleted_at: Date | null; creator_suspended_at: Date | null }) | undefined> {
    return ex
      .selectFrom('api_keys as k')
      .leftJoin('users as u', 'u.id', 'k.created_by')
      .leftJoin('user_suspensions as s', 's.user_id', 'k.created_by')
      .select(['k.id', 'k.org_id', 'k.env_id', 'k.scope', 'k.permissions', 'u.deleted_at as creator_deleted_at', 's.suspended_at as creator_suspended_at'])
      .where('k.key_hash', '=', hash)
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Records use at most once a minute per key, so verification stays a read most of the time. */
  async touch(id: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`${now}::timestamptz - interval '1 minute'`)]))
      .execute();
  }

  findLive(orgId: string, id: string, ex: Executor<AuthDb> = this.db): Promise<ApiKeyPublicRow | undefined> {
    return ex
      .selectFrom('api_keys')
      .select(LIVE_COLUMNS)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  listLive(orgId: string, opts: { limit: number; before?: string; envId?: string }, ex: Executor<AuthDb> = this.db): Promise<ApiKeyPublicRow[]> {
    let q = ex.selectFrom('api_keys').select(LIVE_COLUMNS).where('org_id', '=', orgId).where('revoked_at', 'is', null);
    if (opts.before) q = q.where('id', '<', opts.before);
    if (opts.envId) q = q.where('env_id', '=', opts.envId);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** Revokes every live key of one environment; the ids of those it revoked. */
  async revokeAllIn(orgId: string, envId: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<string[]> {
    const rows = await ex
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('org_id', '=', orgId)
      .where('env_id', '=', envId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async revoke(orgId: string, id: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** The live keys a person created, in every organization. */
  liveCreatedBy(userId: string, ex: Executor<AuthDb> = this.db): Promise<Pick<ApiKeyRow, 'id' | 'org_id'>[]> {
    return ex.selectFrom('api_keys').select(['id', 'org_id']).where('created_by', '=', userId).where('revoked_at', 'is', null).execute();
  }

  /** Revokes every live key a person created; those it revoked. */
  revokeCreatedBy(userId: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<Pick<ApiKeyRow, 'id' | 'org_id'>[]> {
    return ex.updateTable('api_keys').set({ revoked_at: now }).where('created_by', '=', userId).where('revoked_at', 'is', null).returning(['id', 'org_id']).execute();
  }
}
