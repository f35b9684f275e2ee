/**
 * A person's own sessions: the live ones listed (newest first, the calling one marked),
 * one revoked, or all but the calling one. Each revocation is announced on AUTH_FACTS, and
 * every gateway refuses the session's access tokens from then on; its refresh token is
 * refused by refresh, which reads the session.
 */
import { z } from 'zod';
import { AppError, encodePageToken, idSchema, pageCursor, type Session } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { AuthTx } from '../repo/tables';
import type { SessionRow } from '../repo/user.repository';
import type { ClientInfo, RevocationPort, Transact, Users } from './ports';

/** The longest User-Agent a session keeps (longer ones are cut). */
export const USER_AGENT_MAX_LENGTH = 512;
/** An IPv6 address with a zone fits easily; anything longer is not an address. */
const IP_MAX_LENGTH = 64;

/** What a session records of its client: the address and User-Agent the gateway saw; null when unknown. */
export function recordedClient(client: ClientInfo): { ip: string | null; userAgent: string | null } {
  const ip = client.ip && client.ip.length <= IP_MAX_LENGTH ? client.ip : null;
  const userAgent = client.userAgent?.trim().slice(0, USER_AGENT_MAX_LENGTH) || null;
  return { ip, userAgent };
}

/** Neither revoked nor expired: its refresh token can still be exchanged. */
export function isLive(session: Pick<SessionRow, 'revoked_at' | 'expires_at'>, now: Date): boolean {
  return session.revoked_at === null && session.expires_at > now;
}

/** The fact telling every gateway to refuse the session's access tokens until the last of them has expired anyway. */
export function revocationFact(session: Pick<SessionRow, 'id' | 'user_id'>, now: Date, accessTokenTtlSeconds: number) {
  return { session_id: session.id, user_id: session.user_id, tokens_valid_until: new Date(now.getTime() + accessTokenTtlSeconds * 1000).toISOString() };
}

/** The signed-in person and the session of their access token. */
export interface Caller {
  user_id: string;
  session_id: string;
}

export interface SessionSettings {
  accessTokenTtlSeconds: number;
}

const cursor = z.object({ before: idSchema('session') });

function toSession(row: SessionRow, caller: Caller): Session {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_refreshed_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ip: row.ip,
    user_agent: row.user_agent,
    method: row.method,
    current: row.id === caller.session_id,
  };
}

export class Sessions {
  constructor(
    private readonly transact: Transact,
    private readonly users: Users,
    private readonly revocations: RevocationPort,
    private readonly clock: Clock,
    private readonly settings: SessionSettings,
  ) {}

  async list(caller: Caller, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Session[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.users.listLiveSessions(caller.user_id, this.clock.now(), { limit: q.limit + 1, before });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map((r) => toSession(r, caller)), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /**
   * Ends one of the caller's sessions (the calling one too: that is a logout). Another
   * person's session, or an unknown id, is not found; one already ended stays ended.
   */
  async revoke(caller: Caller, sessionId: string): Promise<void> {
    const session = await this.users.findSessionOfUser(caller.user_id, sessionId);
    if (!session) throw AppError.notFound('session');
    if (session.revoked_at !== null) return;
    const reason = session.id === caller.session_id ? 'logout' : 'revoked_by_user';
    await this.revokeAnnounced(async (trx, now) => ((await this.users.revokeSession(session.id, reason, now, trx)) ? [session] : []));
  }

  /** Ends every live session of the caller but the calling one; answers how many it ended. */
  async revokeOthers(caller: Caller): Promise<{ revoked: number }> {
    const ended = await this.revokeAnnounced((trx, now) => this.users.revokeSessionsOfUser(caller.user_id, caller.session_id, 'revoked_by_user', now, trx));
    return { revoked: ended.length };
  }

  /**
   * Marks sessions revoked and announces each before the transaction commits: if an
   * announcement fails, nothing is marked and the caller's retry does it all again (marked
   * but unannounced, a session's access tokens would live on and a retry would not see it).
   */
  private async revokeAnnounced(
    mark: (trx: AuthTx, now: Date) => Promise<Pick<SessionRow, 'id' | 'user_id'>[]>,
  ): Promise<Pick<SessionRow, 'id' | 'user_id'>[]> {
    const now = this.clock.now();
    return this.transact(async (trx) => {
      const ended = await mark(trx, now);
      await Promise.all(ended.map((s) => this.revocations.sessionRevoked(revocationFact(s, now, this.settings.accessTokenTtlSeconds))));
      return ended;
    });
  }
}
