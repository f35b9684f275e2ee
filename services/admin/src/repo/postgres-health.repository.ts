/** PostgreSQL as this service sees it: reachable, and how far a standby replays behind (one query). */
import { sql, type Kysely } from '@mailroom/db';
import type { AdminDb } from './tables';

export class PostgresHealthRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  /**
   * On a standby: how long since the last replayed transaction; on a primary: the largest
   * replay lag its standbys report (null without standbys, or without the right to see them).
   */
  async replicationLagSeconds(): Promise<number | null> {
    const { rows } = await sql<{ lag: string | number | null }>`
      select case when pg_is_in_recovery()
        then extract(epoch from now() - pg_last_xact_replay_timestamp())
        else (select extract(epoch from max(replay_lag)) from pg_stat_replication) end as lag`.execute(this.db);
    const lag = rows[0]?.lag;
    return lag === null || lag === undefined ? null : Number(lag);
  }
}
