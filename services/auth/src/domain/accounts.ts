/**
 * Accounts and sessions: signup (which creates the person's organization), login,
 * rotating refresh tokens with reuse detection, switching organizations, logout; the
 * person's profile. A session belongs to one active organization; its access tokens carry
 * that organization, its default environment and the person's role in it.
 */
import { AppError, newId, type LoginResponse, type SessionResponse, type User, type UserProfile } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { AuthTx } from '../repo/tables';
import type { SessionRow, UserRow } from '../repo/user.repository';
import { signInAccount } from './account-deletion';
import type { AccessTokens } from './access-tokens';
import type { AttemptGuard } from './attempt-guard';
import type { EmailVerification } from './email-verification';
import type { MfaLogin } from './mfa-login';
import type { Passwords } from './passwords';
import type { ClientInfo, DeletedAccounts, OrgsPort, RevocationPort, Transact, Users } from './ports';
import { REFRESH_TOKEN_PREFIX, ssoRequired, tokenFields, type SessionStart } from './session-start';
import { isLive, recordedClient, revocationFact, type Caller } from './sessions';
import { toUser } from './users';

const INVALID_CREDENTIALS = 'email or password is incorrect';

/** What a new account starts with: a password (signup) or none (an outside provider), its address verified or not. */
export interface NewAccount {
  email: string;
  name: string | null;
  passwordHash: string | null;
  emailVerifiedAt: Date | null;
}
/** Sign-in of deleted accounts (account-recovery.ts): the account of an address in any state, and the answer to one deleted. */
export type DeletedSignIn = Pick<DeletedAccounts, 'findByEmail'> & { refuseSignIn(user: UserRow): Promise<AppError> };

export class Accounts {
  constructor(
    private readonly transact: Transact,
    private readonly users: Users,
    private readonly passwords: Pick<Passwords, 'hash' | 'verify' | 'needsRehash'>,
    private readonly tokens: Pick<AccessTokens, 'issue' | 'settings'>,
    private readonly orgs: OrgsPort,
    private readonly revocations: RevocationPort,
    private readonly clock: Clock,
    private readonly start: SessionStart,
    private readonly verification: Pick<EmailVerification, 'queueInSignup' | 'kick'>,
    private readonly deleted: DeletedSignIn,
    /** The second step of a login when the account has MFA on. */
    private readonly secondFactor: Pick<MfaLogin, 'required' | 'challenge'>,
    /** Failed logins per email, known or not: past the limit even the right password waits (attempt-guard.ts). */
    private readonly guard: Pick<AttemptGuard, 'attempt'>,
  ) {}

  async signup(input: { email: string; password: string; name?: string | undefined }, client: ClientInfo): Promise<SessionResponse> {
    const passwordHash = await this.passwords.hash(input.password);
    return this.create({ email: input.email, name: input.name ?? null, passwordHash, emailVerifiedAt: null }, client);
  }

  /**
   * A new account with its organization and a first session: signup, and a first sign-in
   * with an outside provider (no password; `within` links the identity in the same
   * transaction). An address not known verified gets its verification mail.
   */
  async create(account: NewAccount, client: ClientInfo, within?: (trx: AuthTx, userId: string) => Promise<void>): Promise<SessionResponse> {
    const now = this.clock.now();
    const userId = newId('user');
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const sessionId = newId('session');
    const { email, name } = account;
    const created = await this.transact(async (trx) => {
      if (!(await this.users.insertUser({ id: userId, email, password_hash: account.passwordHash, name, now, email_verified_at: account.emailVerifiedAt }, trx))) {
        throw new AppError('email_taken', 'an account with this email already exists; log in instead');
      }
      // Before the organization is asked for: what fails here leaves nothing in orgs.
      if (within) await within(trx, userId);
      // Inside the transaction: if the organization cannot be made, no account is left behind.
      const result = await this.orgs.createForOwner(userId, name ? `${name}'s organization` : `${email.split('@')[0]}'s organization`);
      await this.start.insert(trx, { sessionId, userId, orgId: result.organization.id, refresh, now, client, method: account.passwordHash === null ? 'provider' : 'password' });
      if (account.emailVerifiedAt === null) await this.verification.queueInSignup(trx, { id: userId, email });
      return result;
    });
    this.verification.kick();
    const user = await this.users.findLiveById(userId);
    if (!user) throw new AppError('internal_error', 'user vanished after signup');
    const access = await this.tokens.issue({ userId, sessionId, orgId: created.organization.id, envId: created.environment.id, role: 'owner' });
    return { user: toUser(user), organization: created.organization, ...tokenFields(access, refresh) };
  }

  /** A session for the right password; with MFA on, the token of the second step instead (mfa-login.ts). */
  async login(input: { email: string; password: string }, client: ClientInfo): Promise<LoginResponse> {
    const user = await this.guard.attempt('login', input.email, async () => {
      // Live, or deleted within its window; one past its window answers as an unknown address.
      const found = signInAccount(await this.deleted.findByEmail(input.email), this.clock.now());
      const ok = await this.passwords.verify(found?.password_hash, input.password);
      if (!found || !ok) throw new AppError('invalid_credentials', INVALID_CREDENTIALS);
      return found;
    });
    if (user.password_hash && this.passwords.needsRehash(user.password_hash)) {
      await this.users.updatePasswordHash(user.id, await this.passwords.hash(input.password), this.clock.now());
    }
    // With MFA on, a deleted account too proves the second factor before its recovery token (mfa-login.ts).
    if (await this.secondFactor.required(user.id)) return this.secondFactor.challenge(user);
    if (user.deleted_at !== null) throw await this.deleted.refuseSignIn(user);
    return this.start.signIn(user, client, 'password');
  }

  /**
   * Exchanges a refresh token for a new pair. A token that was already exchanged is a
   * sign of theft: the whole session is revoked and every token of it stops working.
   */
  async refresh(refreshToken: string, client: ClientInfo): Promise<SessionResponse> {
    const hash = sha256(refreshToken);
    const stored = await this.users.findRefreshToken(hash);
    const invalid = new AppError('unauthorized', 'refresh token is invalid or expired; log in again');
    if (!stored) throw invalid;
    const session = await this.users.findSession(stored.session_id);
    if (!session) throw invalid;
    const now = this.clock.now();
    if (stored.used_at !== null) {
      await this.revoke(session, 'refresh_token_reuse');
      throw new AppError('unauthorized', 'refresh token was already used; the session has been revoked for safety, log in again');
    }
    if (session.revoked_at !== null || session.expires_at <= now || stored.expires_at <= now) throw invalid;
    const user = await this.users.findLiveById(session.user_id);
    if (!user) throw invalid;
    const membership = (await this.orgs.memberships(user.id)).find((m) => m.org_id === session.org_id);
    if (!membership) {
      await this.revoke(session, 'membership_ended');
      throw invalid;
    }
    // SSO enforced since the sign-in: a session it did not open ends.
    if (!(await this.start.allows(membership, session.method))) {
      await this.revoke(session, 'sso_enforced');
      throw ssoRequired(membership.org_id);
    }
    const next = randomToken(REFRESH_TOKEN_PREFIX);
    const seen = recordedClient(client);
    const won = await this.transact(async (trx) => {
      if (!(await this.users.useRefreshToken(hash, now, trx))) return false;
      const expiresAt = this.start.refreshExpiry(now);
      await this.users.insertRefreshToken({ token_hash: sha256(next), session_id: session.id, created_at: now, expires_at: expiresAt }, trx);
      // "Last used" is the last time tokens were issued: gateways check access tokens on their own.
      const use = { now, expiresAt, ip: seen.ip ?? session.ip, userAgent: seen.userAgent ?? session.user_agent };
      // Revoked since it was read: nothing of this exchange is kept.
      if (!(await this.users.touchSession(session.id, use, trx))) throw invalid;
      return true;
    });
    if (!won) {
      // A concurrent request exchanged the same token: reuse.
      await this.revoke(session, 'refresh_token_reuse');
      throw new AppError('unauthorized', 'refresh token was already used; the session has been revoked for safety, log in again');
    }
    return this.start.respond(user, session.id, membership, next);
  }

  /**
   * A new session acting in another organization the caller belongs to (membership read
   * from orgs now), its tokens for the organization's default environment and the role
   * there. The calling session is kept: each stays in its own organization.
   */
  async switchOrg(caller: Caller, orgId: string, client: ClientInfo): Promise<SessionResponse> {
    const now = this.clock.now();
    const ended = new AppError('unauthorized', 'this session has ended; log in again');
    const current = await this.users.findSessionOfUser(caller.user_id, caller.session_id);
    if (!current || !isLive(current, now)) throw ended;
    const user = await this.users.findLiveById(caller.user_id);
    if (!user) throw ended;
    // Not a member and no such organization answer alike: another organization's existence is not told.
    const membership = (await this.orgs.memberships(user.id)).find((m) => m.org_id === orgId);
    if (!membership) throw AppError.notFound('organization');
    // Switching proves nothing new: the new session keeps the proof of the one it came from.
    // SSO enforced there: only a session SSO opened (or the owner's) may act in it.
    if (!(await this.start.allows(membership, current.method))) throw ssoRequired(orgId);
    // An SSO session proves the person to its organization's provider only: it does not reach the others.
    if (current.method === 'sso' && current.org_id !== orgId) {
      throw new AppError('forbidden', 'a session opened by single sign-on acts in its organization only; sign in with your password (or another way) to reach your other organizations');
    }
    return this.start.open(user, client, membership, current.authenticated_at, current.method);
  }

  async logout(sessionId: string): Promise<void> {
    const session = await this.users.findSession(sessionId);
    if (session) await this.revoke(session, 'logout');
  }

  async me(userId: string): Promise<User> {
    const user = await this.users.findLiveById(userId);
    if (!user) throw AppError.notFound('user');
    return toUser(user);
  }

  /** Changes what is given of the person's profile; answers it as `me` does. */
  async updateProfile(userId: string, changes: { name?: string | null | undefined }): Promise<User> {
    if (changes.name === undefined) return this.me(userId);
    const updated = await this.users.updateName(userId, changes.name, this.clock.now());
    if (!updated) throw AppError.notFound('user');
    return toUser(updated);
  }

  /** Names and emails of live accounts among `ids` (for other services' lists); unknown ids are left out. */
  async profiles(ids: readonly string[]): Promise<UserProfile[]> {
    const rows = await this.users.findProfiles([...new Set(ids)]);
    return rows.map((r) => ({ id: r.id, email: r.email, name: r.name, email_verified: r.email_verified_at !== null }));
  }

  /** Revokes in the database, then tells every gateway; repeating it repeats the announcement. */
  private async revoke(session: SessionRow, reason: string): Promise<void> {
    const now = this.clock.now();
    await this.users.revokeSession(session.id, reason, now);
    await this.revocations.sessionRevoked(revocationFact(session, now, this.tokens.settings.ttlSeconds));
  }
}
