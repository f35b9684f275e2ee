/**
 * Opening a session once a person has proved who they are (a password, a second factor, later
 * an outside provider): the session row and its first refresh token, then the answer of
 * login with an access token for the session's organization. A sign-in also tells the person
 * when it comes from a client new to the account (sign-in-notice.ts).
 */
import { AppError, newId, type Membership, type SessionResponse } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { UserRow } from '../repo/user.repository';
import type { AccessTokens } from './access-tokens';
import type { AuthTx } from '../repo/tables';
import type { ClientInfo, OrgsPort, Transact, Users } from './ports';
import { recordedClient } from './sessions';
import type { SignInMethod, SignInNotices } from './sign-in-notice';
import { toUser } from './users';

export const REFRESH_TOKEN_PREFIX = 'mrt_';

export interface SessionStartSettings {
  refreshTokenTtlSeconds: number;
}

/** What a new session is made of; `refresh` is the clear refresh token, stored only as its hash. */
export interface NewSession {
  sessionId: string;
  userId: string;
  orgId: string;
  refresh: string;
  now: Date;
  client: ClientInfo;
  /** When the person proved who they are: `now` for a sign-in; switch-org passes its session's. */
  authenticatedAt?: Date | undefined;
}

export function tokenFields(access: { token: string; expiresIn: number }, refresh: string) {
  return { access_token: access.token, refresh_token: refresh, token_type: 'Bearer' as const, expires_in: access.expiresIn };
}

export class SessionStart {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'insertSession' | 'insertRefreshToken'>,
    private readonly tokens: Pick<AccessTokens, 'issue'>,
    private readonly orgs: OrgsPort,
    private readonly clock: Clock,
    private readonly settings: SessionStartSettings,
    private readonly notices: Pick<SignInNotices, 'queue' | 'kick'>,
  ) {}

  /**
   * A new session of `user` in `membership`'s organization, or in the first organization the
   * person belongs to when none is named; `authenticatedAt`: when the person proved who they
   * are, if not now (a session opened from another).
   */
  async open(user: UserRow, client: ClientInfo, membership?: Membership, authenticatedAt?: Date): Promise<SessionResponse> {
    const acting = membership ?? (await this.orgs.memberships(user.id))[0];
    if (!acting) throw new AppError('forbidden', 'this account belongs to no organization');
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const sessionId = newId('session');
    const now = this.clock.now();
    await this.transact((trx) => this.insert(trx, { sessionId, userId: user.id, orgId: acting.org_id, refresh, now, client, authenticatedAt }));
    return this.respond(user, sessionId, acting, refresh);
  }

  /**
   * A sign-in (login, a login's second factor): a new session in the first organization the
   * person belongs to, as `open` makes it, and in the same transaction what the sign-in
   * spends (`proof`, run first: whatever it throws, nothing of the sign-in is kept) and the
   * new-sign-in notice when the client is new to the account.
   */
  async signIn(user: UserRow, client: ClientInfo, how: SignInMethod, proof?: (trx: AuthTx) => Promise<void>): Promise<SessionResponse> {
    const acting = (await this.orgs.memberships(user.id))[0];
    if (!acting) throw new AppError('forbidden', 'this account belongs to no organization');
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const sessionId = newId('session');
    const now = this.clock.now();
    const noticed = await this.transact(async (trx) => {
      if (proof) await proof(trx);
      // Before the session is written: the new session is not a client seen before.
      const queued = await this.notices.queue(trx, user, client, how, now);
      await this.insert(trx, { sessionId, userId: user.id, orgId: acting.org_id, refresh, now, client });
      return queued;
    });
    // A proof may have queued mail too (a recovery code used): out now, not at the relay's next round.
    if (noticed || proof) this.notices.kick();
    return this.respond(user, sessionId, acting, refresh);
  }

  /** Writes the session and its first refresh token in `trx`. */
  async insert(trx: Parameters<Users['insertSession']>[1], s: NewSession): Promise<void> {
    const expiresAt = this.refreshExpiry(s.now);
    const seen = recordedClient(s.client);
    await this.users.insertSession(
      {
        id: s.sessionId,
        user_id: s.userId,
        org_id: s.orgId,
        created_at: s.now,
        last_refreshed_at: s.now,
        expires_at: expiresAt,
        ip: seen.ip,
        user_agent: seen.userAgent,
        authenticated_at: s.authenticatedAt ?? s.now,
      },
      trx,
    );
    await this.users.insertRefreshToken({ token_hash: sha256(s.refresh), session_id: s.sessionId, created_at: s.now, expires_at: expiresAt }, trx);
  }

  /** The answer of login for a session: the person, the organization and a token pair. */
  async respond(user: UserRow, sessionId: string, membership: Membership, refresh: string): Promise<SessionResponse> {
    const [organization, access] = await Promise.all([
      this.orgs.organization(membership.org_id),
      this.tokens.issue({ userId: user.id, sessionId, orgId: membership.org_id, envId: membership.default_env_id, role: membership.role }),
    ]);
    return { user: toUser(user), organization, ...tokenFields(access, refresh) };
  }

  /** When a refresh token issued at `now` stops working. */
  refreshExpiry(now: Date): Date {
    return new Date(now.getTime() + this.settings.refreshTokenTtlSeconds * 1000);
  }
}
