/**
 * Opening a session once a person has proved who they are (a password, a second factor, later
 * an outside provider, single sign-on): the session row and its first refresh token, then the answer of
 * login with an access token for the session's organization. A sign-in also tells the person
 * when it comes from a client new to the account (sign-in-notice.ts). An organization whose
 * active SSO configuration is enforced takes its members (but the owner) through SSO only. A
 * person the platform's operators suspended opens no session at all (403 account_suspended).
 */
import { AppError, newId, type Membership, type SessionResponse } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { UserRow } from '../repo/user.repository';
import type { AccessTokens } from './access-tokens';
import type { AuthTx } from '../repo/tables';
import type { ClientInfo, OrgsPort, Transact, Users } from './ports';
import { recordedClient } from './sessions';
import type { SignInMethod, SignInNotices } from './sign-in-notice';
import { suspendedError } from './user-suspensions';
import { toUser } from './users';

/** Whether the platform's operators suspended a person (user-suspensions.ts): no session opens for them. */
export interface SuspensionGate {
  /** In `tx`: the answer holds until the transaction that writes the session commits. */
  isSuspended(userId: string, tx?: AuthTx): Promise<boolean>;
}

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
  /** How they proved it (SignInMethod); switch-org passes its session's. */
  method?: string | null | undefined;
}

/**
 * Organizations whose active SSO configuration is enforced (domain/sso-enforcement.ts): their
 * members but the owner open sessions there through SSO only.
 */
export interface SsoGate {
  /** The ones among `orgIds` that enforce SSO. */
  enforcedAmong(orgIds: readonly string[]): Promise<ReadonlySet<string>>;
}

/** Whether a session opened by `method` may act in `membership`'s organization, given the organizations enforcing SSO. */
export function ssoAllows(membership: Pick<Membership, 'org_id' | 'role'>, method: string | null | undefined, enforced: ReadonlySet<string>): boolean {
  return method === 'sso' || membership.role === 'owner' || !enforced.has(membership.org_id);
}

/** The refusal of a sign-in that is not SSO into an organization enforcing it. */
export function ssoRequired(orgId: string): AppError {
  return new AppError('sso_required', `organization ${orgId} requires single sign-on: sign in with GET /api/v1/auth/sso/${orgId} (the owner may still use the password)`);
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
    /** None: no organization enforces SSO (unit tests). */
    private readonly sso: SsoGate = { enforcedAmong: async () => new Set() },
    /** None: nobody is suspended (unit tests). */
    private readonly suspensions: SuspensionGate = { isSuspended: async () => false },
  ) {}

  /**
   * The organization a sign-in by `how` acts in: the first the person belongs to whose SSO
   * enforcement lets it in (an owner always; sso_required when every one refuses it).
   */
  async acting(userId: string, how: string | null | undefined): Promise<Membership> {
    const memberships = await this.orgs.memberships(userId);
    if (memberships.length === 0) throw new AppError('forbidden', 'this account belongs to no organization');
    const enforced = how === 'sso' ? new Set<string>() : await this.sso.enforcedAmong(memberships.map((m) => m.org_id));
    const allowed = memberships.find((m) => ssoAllows(m, how, enforced));
    if (!allowed) throw ssoRequired(memberships[0]!.org_id);
    return allowed;
  }

  /** Refuses a suspended person before a sign-in does work of its own (joining an organization); the session's transaction asks again. */
  async refuseIfSuspended(userId: string): Promise<void> {
    if (await this.suspensions.isSuspended(userId)) throw suspendedError();
  }

  /** Whether a session of `method` may (still) act in `membership`'s organization. */
  async allows(membership: Pick<Membership, 'org_id' | 'role'>, method: string | null | undefined): Promise<boolean> {
    if (method === 'sso' || membership.role === 'owner') return true;
    return ssoAllows(membership, method, await this.sso.enforcedAmong([membership.org_id]));
  }

  /**
   * A new session of `user` in `membership`'s organization, or in the first organization the
   * person belongs to when none is named; `authenticatedAt`: when the person proved who they
   * are, if not now (a session opened from another).
   */
  async open(user: UserRow, client: ClientInfo, membership?: Membership, authenticatedAt?: Date, method?: string | null): Promise<SessionResponse> {
    const acting = membership ?? (await this.acting(user.id, method));
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const sessionId = newId('session');
    const now = this.clock.now();
    await this.transact(async (trx) => {
      if (await this.suspensions.isSuspended(user.id, trx)) throw suspendedError();
      await this.insert(trx, { sessionId, userId: user.id, orgId: acting.org_id, refresh, now, client, authenticatedAt, method });
    });
    return this.respond(user, sessionId, acting, refresh);
  }

  /**
   * A sign-in (login, a login's second factor): a new session in the first organization the
   * person belongs to, as `open` makes it, and in the same transaction what the sign-in
   * spends (`proof`, run first: whatever it throws, nothing of the sign-in is kept) and the
   * new-sign-in notice when the client is new to the account.
   */
  async signIn(user: UserRow, client: ClientInfo, how: SignInMethod, proof?: (trx: AuthTx) => Promise<void>, membership?: Membership): Promise<SessionResponse> {
    // SSO names its organization; other sign-ins take the first one that lets them in.
    const acting = membership ?? (await this.acting(user.id, how));
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const sessionId = newId('session');
    const now = this.clock.now();
    const noticed = await this.transact(async (trx) => {
      if (proof) await proof(trx);
      if (await this.suspensions.isSuspended(user.id, trx)) throw suspendedError();
      // Before the session is written: the new session is not a client seen before.
      const queued = await this.notices.queue(trx, user, client, how, now);
      await this.insert(trx, { sessionId, userId: user.id, orgId: acting.org_id, refresh, now, client, method: how });
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
        method: s.method ?? null,
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
