/** Admin keys: one query per method. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AdminDb, AdminKeyTable } from './tables';

export type AdminKeyRow = Selectable<AdminKeyTable>;
/** A row as shown: never its hash. */
export type AdminKeyPublicRow = Omit<AdminKeyRow, 'key_hash'>;

const PUBLIC = ['id', 'name', 'key_prefix', 'created_by', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'] as const;

export class AdminKeyRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  async insert(row: Omit<AdminKeyRow, 'last_used_at' | 'revoked_at'>, ex: Executor<AdminDb> = this.db): Promise<void> {
    await ex.insertInto('admin_keys').values(row).execute();
  }

  findByHash(hash: string, ex: Executor<AdminDb> = this.db): Promise<AdminKeyRow | undefined> {
    return ex.selectFrom('admin_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
  }

  find(id: string, ex: Executor<AdminDb> = this.db): Promise<AdminKeyPublicRow | undefined> {
    return ex.selectFrom('admin_keys').select(PUBLIC).where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(limit: number, before: string | undefined, ex: Executor<AdminDb> = this.db): Promise<AdminKeyPublicRow[]> {
    let q = ex.selectFrom('admin_keys').select(PUBLIC);
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** Revokes the key if it acts still; the row as it then is, undefined when it was revoked already or there is none. */
  async revoke(id: string, at: Date, ex: Executor<AdminDb> = this.db): Promise<AdminKeyPublicRow | undefined> {
    return ex.updateTable('admin_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).returning(PUBLIC).executeTakeFirst();
  }

  /** Records a use, at most once a minute per key (a use is shown to the minute). */
  async touch(id: string, at: Date, ex: Executor<AdminDb> = this.db): Promise<void> {
    await ex
      .updateTable('admin_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(at.getTime() - 60_000))]))
      .execute();
  }
}
