/** Where an account's sessions were used from lately (the new-sign-in notice). */
import type { Executor, Kysely } from '@mailroom/db';
import type { AuthDb } from './tables';

export interface SeenClient {
  ip: string | null;
  user_agent: string | null;
}

export class SessionHistoryRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /**
   * The distinct address and User-Agent pairs of the person's sessions (live or ended) last
   * used at or after `since`, most recently used first, at most `limit` of them.
   */
  clientsSince(userId: string, since: Date, limit: number, ex: Executor<AuthDb> = this.db): Promise<SeenClient[]> {
    return ex
      .selectFrom('sessions')
      .select(['ip', 'user_agent'])
      .where('user_id', '=', userId)
      .where('last_refreshed_at', '>=', since)
      .groupBy(['ip', 'user_agent'])
      .orderBy((eb) => eb.fn.max('last_refreshed_at'), 'desc')
      .limit(limit)
      .execute();
  }
}
