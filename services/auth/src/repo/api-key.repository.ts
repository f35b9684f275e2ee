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

  insert(row: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>, ex: Executor<AuthDb> = this.db) {
    return ex.insertInto('api_keys').values(row).execute();
  }

  findLiveByHash(hash: Buffer, ex: Executor<AuthDb> = this.db): Promise<Pick<ApiKeyRow, 'id' | 'org_id' | 'env_id' | 'scope' | 'permissions'> | undefined> {
    return ex
      .selectFrom('api_keys')
      .select(['id', 'org_id', 'env_id', 'scope', 'permissions'])
      .where('key_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Records use at most once a minute per key, so verification stays a read most of the time. */
  touch(id: string, now: Date, ex: Executor<AuthDb> = this.db) {
    return ex
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
}
