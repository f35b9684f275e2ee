/** Samples of the platform's health and the claims of sampling rounds: one query per method. */
import type { Kysely, Selectable } from '@mailroom/db';
import type { AdminDb, HealthSampleTable } from './tables';

export type HealthSampleRow = Selectable<HealthSampleTable>;
export type HealthSampleSummary = Omit<HealthSampleRow, 'report'>;

export interface SampleRange {
  from: Date;
  to: Date;
  /** The last id of the previous page. */
  after?: string | undefined;
  changesOnly: boolean;
  limit: number;
}

export class HealthSampleRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  /** True for the one caller whose claim of `slot` landed first. */
  async claimRound(slot: Date): Promise<boolean> {
    const row = await this.db.insertInto('health_rounds').values({ slot }).onConflict((oc) => oc.doNothing()).returning('slot').executeTakeFirst();
    return row !== undefined;
  }

  async latestStatus(): Promise<string | undefined> {
    const row = await this.db.selectFrom('health_samples').select('status').orderBy('taken_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row?.status;
  }

  async insert(row: Omit<HealthSampleRow, 'reasons' | 'report'> & { reasons: string; report: string }): Promise<void> {
    await this.db.insertInto('health_samples').values(row).execute();
  }

  /** Oldest first, within [from, to). */
  list(range: SampleRange): Promise<HealthSampleSummary[]> {
    let q = this.db
      .selectFrom('health_samples')
      .select(['id', 'taken_at', 'status', 'previous_status', 'status_changed', 'reasons'])
      .where('taken_at', '>=', range.from)
      .where('taken_at', '<', range.to);
    if (range.after) q = q.where('id', '>', range.after);
    if (range.changesOnly) q = q.where('status_changed', '=', true);
    return q.orderBy('id', 'asc').limit(range.limit).execute();
  }

  /** Removes samples taken before `before`; how many. */
  async purgeSamples(before: Date): Promise<number> {
    const res = await this.db.deleteFrom('health_samples').where('taken_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async purgeRounds(before: Date): Promise<void> {
    await this.db.deleteFrom('health_rounds').where('slot', '<', before).execute();
  }
}
