/** Alert rules and their transitions: one query per method. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AdminDb, AlertTable, AlertTransitionTable } from './tables';

export type AlertRow = Selectable<AlertTable>;
export type AlertTransitionRow = Selectable<AlertTransitionTable>;
export type AlertWrite = Omit<AlertRow, 'thresholds'> & { thresholds: string };

export class AlertRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  /** Creates the rows that are missing, with these thresholds (JSON); existing rows keep theirs. */
  async ensure(rows: { key: string; thresholds: string }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.insertInto('alerts').values(rows.map((r) => ({ ...r, condition_met: false, consecutive: 0 }))).onConflict((oc) => oc.column('key').doNothing()).execute();
  }

  all(): Promise<AlertRow[]> {
    return this.db.selectFrom('alerts').selectAll().orderBy('key').execute();
  }

  /** The row, locked until the transaction ends. */
  lock(key: string, ex: Executor<AdminDb>): Promise<AlertRow | undefined> {
    return ex.selectFrom('alerts').selectAll().where('key', '=', key).forUpdate().executeTakeFirst();
  }

  async save(row: AlertWrite, ex: Executor<AdminDb> = this.db): Promise<void> {
    const { key, ...rest } = row;
    await ex.updateTable('alerts').set(rest).where('key', '=', key).execute();
  }

  async addTransition(row: Omit<AlertTransitionRow, never>, ex: Executor<AdminDb> = this.db): Promise<void> {
    await ex.insertInto('alert_transitions').values(row).execute();
  }

  /** The last `perKey` transitions of every rule, newest first. */
  recentTransitions(perKey: number): Promise<AlertTransitionRow[]> {
    return this.db
      .selectFrom((eb) =>
        eb
          .selectFrom('alert_transitions')
          .selectAll()
          .select((e) => e.fn.agg<number>('row_number').over((o) => o.partitionBy('key').orderBy('at', 'desc').orderBy('id', 'desc')).as('n'))
          .as('t'),
      )
      .select(['id', 'key', 'from_state', 'to_state', 'at', 'reason'])
      .where('n', '<=', perKey)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  async purgeTransitions(before: Date): Promise<void> {
    await this.db.deleteFrom('alert_transitions').where('at', '<', before).execute();
  }

  transaction<T>(work: (trx: Executor<AdminDb>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
