/** The brute-force guard's counts (attempt_guards), one row per kind of secret and identifier hash. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AttemptGuardTable, AuthDb } from './tables';

export type AttemptRow = Selectable<AttemptGuardTable>;
export type AttemptKind = AttemptRow['kind'];
export type AttemptKey = Pick<AttemptRow, 'kind' | 'identifier_hash'>;

export class AttemptRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** Makes the row of `key` with `empty` if it has none, so that it can be locked. */
  async ensure(empty: AttemptRow, ex: Executor<AuthDb>): Promise<void> {
    await ex.insertInto('attempt_guards').values(empty).onConflict((oc) => oc.doNothing()).execute();
  }

  /** The row, locked until the transaction ends: concurrent attempts at one identifier take turns. */
  lock(key: AttemptKey, ex: Executor<AuthDb>): Promise<AttemptRow | undefined> {
    return ex.selectFrom('attempt_guards').selectAll().where('kind', '=', key.kind).where('identifier_hash', '=', key.identifier_hash).forUpdate().executeTakeFirst();
  }

  async save(row: AttemptRow, ex: Executor<AuthDb>): Promise<void> {
    const { kind, identifier_hash, ...state } = row;
    await ex.updateTable('attempt_guards').set(state).where('kind', '=', kind).where('identifier_hash', '=', identifier_hash).execute();
  }

  async remove(key: AttemptKey, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('attempt_guards').where('kind', '=', key.kind).where('identifier_hash', '=', key.identifier_hash).execute();
  }

  /** Deletes the rows forgotten by `now`; how many. */
  async removeForgotten(now: Date, ex: Executor<AuthDb> = this.db): Promise<number> {
    const res = await ex.deleteFrom('attempt_guards').where('forget_at', '<=', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
