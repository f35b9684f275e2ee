/**
 * Sign-ins on in-memory stand-ins, for unit specs: the history of the clients an account's
 * sessions were used from, and a SessionStart whose sessions are kept in that history, with
 * new-sign-in notices.
 */
import type { Membership, Organization } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { SessionStart } from '../src/domain/session-start';
import { SignInNotices, type SessionHistory } from '../src/domain/sign-in-notice';
import type { AccountOutbox, OrgsPort } from '../src/domain/ports';
import type { SeenClient } from '../src/repo/session-history.repository';
import type { SessionRow } from '../src/repo/user.repository';
import { memoryTransact } from './memory-credentials';

/** The clients of an account's sessions, each with when it was last used. */
export class MemoryHistory implements SessionHistory {
  readonly used: (SeenClient & { user_id: string; at: Date })[] = [];

  async clientsSince(userId: string, since: Date, limit: number): Promise<SeenClient[]> {
    const recent = this.used.filter((u) => u.user_id === userId && u.at >= since).sort((a, b) => b.at.getTime() - a.at.getTime());
    const distinct = new Map(recent.map((u) => [`${u.ip}\n${u.user_agent}`, { ip: u.ip, user_agent: u.user_agent }]));
    return [...distinct.values()].slice(0, limit);
  }
}

const ORG: Organization = { id: 'org_01', name: "Ada's organization", plan: 'free', status: 'active', default_env_id: 'env_01', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
const MEMBERSHIP: Membership = { org_id: ORG.id, org_name: ORG.name, role: 'owner', default_env_id: ORG.default_env_id };

/**
 * Sign-ins on stand-ins: sessions written to `sessions` and to the history of clients, access
 * tokens `at:<session id>`, every person the owner of one organization; notices written to `outbox`.
 */
export function memorySignIns(clock: Clock, outbox: AccountOutbox) {
  const history = new MemoryHistory();
  const sessions: Omit<SessionRow, 'revoked_at' | 'revoked_reason'>[] = [];
  const users = {
    insertSession: async (row: Omit<SessionRow, 'revoked_at' | 'revoked_reason'>) => {
      sessions.push(row);
      history.used.push({ user_id: row.user_id, ip: row.ip, user_agent: row.user_agent, at: row.last_refreshed_at });
    },
    insertRefreshToken: async () => undefined,
  };
  const orgs: OrgsPort = {
    createForOwner: async () => Promise.reject(new Error('not in these specs')),
    memberships: async () => [MEMBERSHIP],
    organization: async () => ORG,
    environment: async () => Promise.reject(new Error('not in these specs')),
  };
  const tokens = { issue: async (c: { sessionId: string }) => ({ token: `at:${c.sessionId}`, expiresIn: 900 }) };
  const start = new SessionStart(memoryTransact, users, tokens, orgs, clock, { refreshTokenTtlSeconds: 3_600 }, new SignInNotices(history, outbox));
  return { start, sessions, history };
}
