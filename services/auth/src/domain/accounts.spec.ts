/**
 * Sessions without a database: signup, login, refresh rotation and reuse detection, logout,
 * switching organizations, a person's own sessions (list, revoke, revoke all others), the
 * profile. The users store is an in-memory stand-in with the repository's semantics (one
 * account per email, deleted or not, a refresh token used once), and its transaction puts sessions and
 * tokens back as they were when the work fails; tokens and passwords are stand-ins too.
 */
import { AppError, type Membership, type Organization, type SessionResponse } from '@mailroom/contracts';
import { ManualClock, sha256 } from '@mailroom/platform';
import type { RefreshTokenRow, SessionRow, UserRow } from '../repo/user.repository';
import type { AuthTx } from '../repo/tables';
import type { AccessTokenClaims } from './access-tokens';
import { memoryGuard } from '../../test/memory-attempts';
import { Accounts } from './accounts';
import { SessionStart } from './session-start';
import type { OrgsPort, RevocationPort, Transact, Users } from './ports';
import { Sessions, USER_AGENT_MAX_LENGTH } from './sessions';

class MemoryUsers implements Users {
  readonly users = new Map<string, UserRow>();
  readonly sessions = new Map<string, SessionRow>();
  readonly tokens = new Map<string, RefreshTokenRow>();

  async insertUser(row: { id: string; email: string; password_hash: string; name: string | null; now: Date }): Promise<boolean> {
    if ([...this.users.values()].some((u) => u.email === row.email)) return false;
    this.users.set(row.id, { id: row.id, email: row.email, password_hash: row.password_hash, name: row.name, email_verified_at: null, created_at: row.now, updated_at: row.now, deleted_at: null });
    return true;
  }
  async findLiveByEmail(email: string) {
    return [...this.users.values()].find((u) => u.email === email && u.deleted_at === null);
  }
  async findLiveById(id: string) {
    const u = this.users.get(id);
    return u && u.deleted_at === null ? u : undefined;
  }
  async findProfiles(ids: readonly string[]) {
    return [...this.users.values()].filter((u) => ids.includes(u.id) && u.deleted_at === null).map(({ id, email, name, email_verified_at }) => ({ id, email, name, email_verified_at }));
  }
  async updateName(id: string, name: string | null, now: Date) {
    const u = this.users.get(id);
    if (!u || u.deleted_at !== null) return undefined;
    Object.assign(u, { name, updated_at: now });
    return { ...u };
  }
  async updatePasswordHash(id: string, hash: string): Promise<void> {
    const u = this.users.get(id);
    if (u) u.password_hash = hash;
  }
  async insertSession(row: Omit<SessionRow, 'revoked_at' | 'revoked_reason'>): Promise<void> {
    this.sessions.set(row.id, { ...row, revoked_at: null, revoked_reason: null });
  }
  async findSession(id: string) {
    return this.sessions.get(id);
  }
  async findSessionOfUser(userId: string, id: string) {
    const s = this.sessions.get(id);
    return s?.user_id === userId ? s : undefined;
  }
  async listLiveSessions(userId: string, now: Date, opts: { limit: number; before?: string | undefined }) {
    return [...this.sessions.values()]
      .filter((s) => s.user_id === userId && s.revoked_at === null && s.expires_at > now && (!opts.before || s.id < opts.before))
      .sort((a, b) => (a.id < b.id ? 1 : -1))
      .slice(0, opts.limit);
  }
  async revokeSessionsOfUser(userId: string, keep: string, reason: string, now: Date) {
    const live = [...this.sessions.values()].filter((s) => s.user_id === userId && s.id !== keep && s.revoked_at === null && s.expires_at > now);
    for (const s of live) Object.assign(s, { revoked_at: now, revoked_reason: reason });
    return live.map(({ id, user_id }) => ({ id, user_id }));
  }
  async revokeSession(id: string, reason: string, now: Date): Promise<boolean> {
    const s = this.sessions.get(id);
    if (!s || s.revoked_at) return false;
    Object.assign(s, { revoked_at: now, revoked_reason: reason });
    return true;
  }
  async touchSession(id: string, use: { now: Date; expiresAt: Date; ip: string | null; userAgent: string | null }): Promise<boolean> {
    const s = this.sessions.get(id);
    if (!s || s.revoked_at) return false;
    Object.assign(s, { last_refreshed_at: use.now, expires_at: use.expiresAt, ip: use.ip, user_agent: use.userAgent });
    return true;
  }
  async insertRefreshToken(row: Omit<RefreshTokenRow, 'used_at'>): Promise<void> {
    this.tokens.set(row.token_hash.toString('hex'), { ...row, used_at: null });
  }
  async findRefreshToken(hash: Buffer) {
    return this.tokens.get(hash.toString('hex'));
  }
  async useRefreshToken(hash: Buffer, now: Date): Promise<boolean> {
    const t = this.tokens.get(hash.toString('hex'));
    if (!t || t.used_at) return false;
    t.used_at = now;
    return true;
  }
}

const ORG: Organization = { id: 'org_01', name: "Ada's organization", plan: 'free', status: 'active', default_env_id: 'env_01', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };

function setup() {
  const clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
  const users = new MemoryUsers();
  const revoked: { session_id: string; user_id: string; tokens_valid_until: string }[] = [];
  const announcer = { fails: false };
  let memberships: Membership[] = [];
  const orgs: OrgsPort = {
    createForOwner: async () => {
      memberships = [{ org_id: ORG.id, org_name: ORG.name, role: 'owner', default_env_id: ORG.default_env_id }];
      return { organization: ORG, environment: { id: ORG.default_env_id, org_id: ORG.id, name: 'production', is_default: true, created_at: ORG.created_at } };
    },
    memberships: async () => memberships,
    organization: async (id) => (id === OTHER_ORG.id ? OTHER_ORG : ORG),
    environment: async () => {
      throw AppError.notFound('environment');
    },
  };
  const revocations: RevocationPort = {
    sessionRevoked: async (fact) => {
      if (announcer.fails) throw new AppError('service_unavailable', 'no responders');
      revoked.push(fact);
    },
    apiKeyRevoked: async () => {},
  };
  // Rollback, as the database does it: what the failed work changed of sessions and tokens is put back.
  const transact: Transact = async (work) => {
    const saved = { sessions: [...users.sessions].map(([id, row]) => [id, { ...row }] as const), tokens: [...users.tokens].map(([id, row]) => [id, { ...row }] as const) };
    try {
      return await work({} as AuthTx);
    } catch (err) {
      for (const [store, rows] of [[users.sessions, saved.sessions], [users.tokens, saved.tokens]] as const) {
        const before = new Map<string, object>(rows);
        for (const key of [...store.keys()]) if (!before.has(key)) store.delete(key);
        for (const [key, row] of rows) Object.assign(store.get(key) ?? {}, row);
      }
      throw err;
    }
  };
  const passwords = { hash: async (p: string) => `hash:${p}`, verify: async (h: string | null | undefined, p: string) => h === `hash:${p}`, needsRehash: () => false };
  const issued: AccessTokenClaims[] = [];
  const tokens = {
    settings: { issuer: 'i', audience: 'a', ttlSeconds: 900 },
    issue: async (c: AccessTokenClaims) => {
      issued.push(c);
      return { token: `at:${c.sessionId}`, expiresIn: 900 };
    },
  };
  // Signup queues the verification mail in its transaction (email-verification.spec.ts has the rest).
  const verificationMails: string[] = [];
  const verification = { queueInSignup: async (_tx: AuthTx, user: { email: string }) => void verificationMails.push(user.email), kick: () => undefined };
  // New-sign-in notices and the second factor have their own specs (sign-in-notice.spec.ts, mfa-login.spec.ts).
  const notices = { queue: async () => false, kick: () => undefined };
  const start = new SessionStart(transact, users, tokens, orgs, clock, { refreshTokenTtlSeconds: 3_600 }, notices);
  // Deleted accounts' sign-in (account-deletion.spec.ts has the rest): the account of an address in any state.
  const deletedSignIn = {
    findByEmail: async (email: string) => [...users.users.values()].find((u) => u.email === email),
    refuseSignIn: async () => new AppError('account_deleted', 'this account was deleted'),
  };
  const noSecondFactor = { required: async () => false, challenge: async () => Promise.reject(new Error('MFA is off in these specs')) };
  const { guard, lockouts } = memoryGuard(clock);
  const accounts = new PasswordOnlyAccounts(transact, users, passwords, tokens, orgs, revocations, clock, start, verification, deletedSignIn, noSecondFactor, guard);
  const sessions = new Sessions(transact, users, revocations, clock, { accessTokenTtlSeconds: 900 });
  return {
    accounts,
    sessions,
    users,
    clock,
    revoked,
    verificationMails,
    issued,
    announcer,
    lockouts,
    endMemberships: () => (memberships = []),
    join: (m: Membership) => void memberships.push(m),
  };
}

/** MFA is off in these specs: a login answers a session. */
class PasswordOnlyAccounts extends Accounts {
  override async login(...args: Parameters<Accounts['login']>): Promise<SessionResponse> {
    const answer = await super.login(...args);
    if ('mfa_required' in answer) throw new Error('a login asked for a second factor');
    return answer;
  }
}

const OTHER_ORG: Organization = { ...ORG, id: 'org_02', name: 'Babbage Ltd', default_env_id: 'env_02' };

const ada = { email: 'ada@example.com', password: 'correct horse battery' };


describe('Accounts', () => {
  it('signs up once per email, and logs in with the password only', async () => {
    const { accounts, users, verificationMails } = setup();
    const first = await accounts.signup(ada, {});
    expect(first).toMatchObject({ user: { email: ada.email, email_verified: false }, organization: { id: ORG.id }, token_type: 'Bearer', refresh_token: expect.stringMatching(/^mrt_/) });
    expect(verificationMails).toEqual([ada.email]);
    await expect(accounts.signup(ada, {})).rejects.toMatchObject({ code: 'email_taken' });
    expect(users.users.size).toBe(1);
    await expect(accounts.login({ ...ada, password: 'wrong' }, {})).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(accounts.login({ ...ada, email: 'nobody@example.com' }, {})).rejects.toMatchObject({ code: 'invalid_credentials' });
    const login = await accounts.login(ada, { ip: '192.0.2.1' });
    expect(login.refresh_token).not.toBe(first.refresh_token);
    expect(users.sessions.size).toBe(2);
  });

  it('rotates the refresh token on every refresh; the old one is spent', async () => {
    const { accounts, users, clock } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    clock.advance(60_000);
    const next = await accounts.refresh(refresh_token, {});
    expect(next.refresh_token).not.toBe(refresh_token);
    const session = [...users.sessions.values()][0]!;
    expect(session.last_refreshed_at).toEqual(clock.now());
    expect(session.expires_at).toEqual(new Date(clock.now().getTime() + 3_600_000));
    expect((await accounts.refresh(next.refresh_token, {})).access_token).toBe(`at:${session.id}`);
  });

  it('revokes the whole session when a spent refresh token comes back, and tells the gateways', async () => {
    const { accounts, users, revoked, clock } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    const next = await accounts.refresh(refresh_token, {});
    await expect(accounts.refresh(refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/already used.*revoked/) });
    const session = [...users.sessions.values()][0]!;
    expect(session.revoked_reason).toBe('refresh_token_reuse');
    expect(revoked).toEqual([{ session_id: session.id, user_id: session.user_id, tokens_valid_until: new Date(clock.now().getTime() + 900_000).toISOString() }]);
    // The thief's newer token dies with the session.
    await expect(accounts.refresh(next.refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('treats two refreshes racing with one token as reuse', async () => {
    const { accounts, users } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    const results = await Promise.allSettled([accounts.refresh(refresh_token, {}), accounts.refresh(refresh_token, {})]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect([...users.sessions.values()][0]!.revoked_reason).toBe('refresh_token_reuse');
  });

  it('logs out: the session is revoked, announced, and its refresh token refused', async () => {
    const { accounts, users, revoked } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    const session = [...users.sessions.values()][0]!;
    await accounts.logout(session.id);
    expect(session.revoked_reason).toBe('logout');
    expect(revoked.map((r) => r.session_id)).toEqual([session.id]);
    await expect(accounts.refresh(refresh_token, {})).rejects.toMatchObject({ message: expect.stringMatching(/invalid or expired/) });
    await accounts.logout('ses_unknown');
    expect(revoked).toHaveLength(1);
  });

  it('refuses a refresh past the session expiry, and ends a session whose membership ended', async () => {
    const expired = setup();
    const first = await expired.accounts.signup(ada, {});
    expired.clock.advance(3_600_001);
    await expect(expired.accounts.refresh(first.refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });

    const left = setup();
    const { refresh_token } = await left.accounts.signup(ada, {});
    left.endMemberships();
    await expect(left.accounts.refresh(refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });
    expect([...left.users.sessions.values()][0]!.revoked_reason).toBe('membership_ended');
    expect(left.revoked).toHaveLength(1);
  });

  it('gives other services the names and emails of live accounts, leaving unknown ids out', async () => {
    const { accounts } = setup();
    const { user } = await accounts.signup({ ...ada, name: 'Ada' }, {});
    expect(await accounts.profiles([user.id, user.id, 'usr_01m8a4vabhcrd4hxzk162k1ma9'])).toEqual([{ id: user.id, email: ada.email, name: 'Ada', email_verified: false }]);
    expect(await accounts.profiles([])).toEqual([]);
  });

  it('stores only hashes of refresh tokens', async () => {
    const { accounts, users } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    expect([...users.tokens.values()].map((t) => t.token_hash)).toEqual([sha256(refresh_token)]);
  });
});

/** The session of a token pair (the stand-in access token names it). */
const sessionOf = (r: { access_token: string }) => r.access_token.slice('at:'.length);
/** Session ids sort by creation time to the millisecond. */
const nextMillisecond = () => new Promise((r) => setTimeout(r, 2));

describe('what a session records', () => {
  it('keeps the client of the sign-in, and of each refresh as the last use', async () => {
    const { accounts, users, clock } = setup();
    const signup = await accounts.signup(ada, { ip: '192.0.2.1', userAgent: 'agent/1' });
    const session = users.sessions.get(sessionOf(signup))!;
    expect(session).toMatchObject({ ip: '192.0.2.1', user_agent: 'agent/1', last_refreshed_at: clock.now() });
    clock.advance(60_000);
    const next = await accounts.refresh(signup.refresh_token, { ip: '198.51.100.7', userAgent: 'agent/2' });
    expect(session).toMatchObject({ ip: '198.51.100.7', user_agent: 'agent/2', last_refreshed_at: clock.now() });
    // A refresh that says nothing of its client leaves what was seen before.
    await accounts.refresh(next.refresh_token, {});
    expect(session).toMatchObject({ ip: '198.51.100.7', user_agent: 'agent/2' });
  });

  it('cuts a long User-Agent, and keeps none for a blank one', async () => {
    const { accounts, users } = setup();
    const long = await accounts.signup(ada, { userAgent: `x${'y'.repeat(2_000)}` });
    expect(users.sessions.get(sessionOf(long))!.user_agent).toHaveLength(USER_AGENT_MAX_LENGTH);
    const blank = await accounts.login(ada, { userAgent: '   ', ip: 'x'.repeat(65) });
    expect(users.sessions.get(sessionOf(blank))).toMatchObject({ user_agent: null, ip: null });
  });

  it('refuses a refresh whose session is revoked while it runs, and keeps nothing of it', async () => {
    const { accounts, users } = setup();
    const { refresh_token, access_token } = await accounts.signup(ada, {});
    const session = users.sessions.get(sessionOf({ access_token }))!;
    const use = users.useRefreshToken.bind(users);
    users.useRefreshToken = async (hash, now) => {
      Object.assign(session, { revoked_at: now, revoked_reason: 'logout' });
      return use(hash, now);
    };
    await expect(accounts.refresh(refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });
    expect(users.tokens.size).toBe(1);
    expect([...users.tokens.values()][0]!.used_at).toBeNull();
  });
});

describe('a person\'s sessions', () => {
  it('lists the live ones newest first, marks the calling one, and pages', async () => {
    const { accounts, sessions, users, clock } = setup();
    const signup = await accounts.signup(ada, { ip: '192.0.2.1', userAgent: 'agent/1' });
    const user_id = signup.user.id;
    const ids = [sessionOf(signup)];
    for (let i = 0; i < 3; i++) {
      await nextMillisecond();
      ids.push(sessionOf(await accounts.login(ada, {})));
    }
    // Neither an ended session nor an expired one is listed.
    await accounts.logout(ids[3]!);
    users.sessions.get(ids[2]!)!.expires_at = clock.now();
    const caller = { user_id, session_id: ids[0]! };
    const all = await sessions.list(caller, { limit: 20 });
    expect(all.data.map((s) => [s.id, s.current])).toEqual([
      [ids[1], false],
      [ids[0], true],
    ]);
    expect(all.next_page_token).toBeNull();
    expect(all.data[1]).toEqual({
      id: ids[0],
      created_at: clock.now().toISOString(),
      last_used_at: clock.now().toISOString(),
      expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString(),
      ip: '192.0.2.1',
      user_agent: 'agent/1',
      method: 'password',
      current: true,
    });
    const first = await sessions.list(caller, { limit: 1 });
    expect(first.data.map((s) => s.id)).toEqual([ids[1]]);
    const second = await sessions.list(caller, { limit: 1, page_token: first.next_page_token! });
    expect([second.data.map((s) => s.id), second.next_page_token]).toEqual([[ids[0]], null]);
    await expect(sessions.list(caller, { limit: 1, page_token: 'nonsense' })).rejects.toMatchObject({ code: 'invalid_request', details: [{ path: 'page_token' }] });
    // Another person sees none of them.
    expect((await sessions.list({ user_id: 'usr_someone', session_id: ids[0]! }, { limit: 20 })).data).toEqual([]);
  });

  it('revokes one: announced to the gateways, its refresh token refused; another person\'s is not found', async () => {
    const { accounts, sessions, users, revoked, clock } = setup();
    const signup = await accounts.signup(ada, {});
    const other = await accounts.login(ada, {});
    const caller = { user_id: signup.user.id, session_id: sessionOf(signup) };
    await sessions.revoke(caller, sessionOf(other));
    expect(users.sessions.get(sessionOf(other))).toMatchObject({ revoked_at: clock.now(), revoked_reason: 'revoked_by_user' });
    expect(revoked).toEqual([{ session_id: sessionOf(other), user_id: signup.user.id, tokens_valid_until: new Date(clock.now().getTime() + 900_000).toISOString() }]);
    await expect(accounts.refresh(other.refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });
    // Again: it stays ended, nothing more is announced.
    await sessions.revoke(caller, sessionOf(other));
    expect(revoked).toHaveLength(1);
    // Someone else's session, and an id nobody has: not found, untouched.
    const bob = await accounts.signup({ ...ada, email: 'bob@example.com' }, {});
    await expect(sessions.revoke(caller, sessionOf(bob))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sessions.revoke(caller, 'ses_01m8a4vabhcrd4hxzk162k1ma9')).rejects.toMatchObject({ code: 'not_found' });
    expect(users.sessions.get(sessionOf(bob))!.revoked_at).toBeNull();
    // The calling session itself: a logout.
    await sessions.revoke(caller, caller.session_id);
    expect(users.sessions.get(caller.session_id)!.revoked_reason).toBe('logout');
    expect(revoked.map((r) => r.session_id)).toEqual([sessionOf(other), caller.session_id]);
  });

  it('revokes all the others, keeps the calling one, and counts only the live ones it ended', async () => {
    const { accounts, sessions, users, revoked, clock } = setup();
    const signup = await accounts.signup(ada, {});
    const others = [await accounts.login(ada, {}), await accounts.login(ada, {}), await accounts.login(ada, {})];
    await accounts.logout(sessionOf(others[2]!));
    const bob = await accounts.signup({ ...ada, email: 'bob@example.com' }, {});
    revoked.length = 0;
    const caller = { user_id: signup.user.id, session_id: sessionOf(signup) };
    expect(await sessions.revokeOthers(caller)).toEqual({ revoked: 2 });
    expect(revoked.map((r) => r.session_id).sort()).toEqual([sessionOf(others[0]!), sessionOf(others[1]!)].sort());
    expect(revoked.every((r) => r.tokens_valid_until === new Date(clock.now().getTime() + 900_000).toISOString())).toBe(true);
    expect(users.sessions.get(caller.session_id)!.revoked_at).toBeNull();
    expect(users.sessions.get(sessionOf(bob))!.revoked_at).toBeNull();
    await expect(accounts.refresh(others[0]!.refresh_token, {})).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await accounts.refresh(signup.refresh_token, {})).access_token).toBe(signup.access_token);
    expect(await sessions.revokeOthers(caller)).toEqual({ revoked: 0 });
  });

  it('marks nothing revoked when the gateways cannot be told, so a retry does it all', async () => {
    const { accounts, sessions, users, revoked, announcer } = setup();
    const signup = await accounts.signup(ada, {});
    const others = [await accounts.login(ada, {}), await accounts.login(ada, {})];
    const caller = { user_id: signup.user.id, session_id: sessionOf(signup) };
    announcer.fails = true;
    await expect(sessions.revokeOthers(caller)).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(sessions.revoke(caller, sessionOf(others[0]!))).rejects.toMatchObject({ code: 'service_unavailable' });
    expect([...users.sessions.values()].every((s) => s.revoked_at === null)).toBe(true);
    announcer.fails = false;
    expect(await sessions.revokeOthers(caller)).toEqual({ revoked: 2 });
    expect(revoked).toHaveLength(2);
  });
});

describe('switching organizations', () => {
  it('starts a session in another organization the person belongs to, with their role and its default environment; the old one stays', async () => {
    const { accounts, users, issued, join, clock } = setup();
    const signup = await accounts.signup(ada, {});
    join({ org_id: OTHER_ORG.id, org_name: OTHER_ORG.name, role: 'viewer', default_env_id: OTHER_ORG.default_env_id });
    const caller = { user_id: signup.user.id, session_id: sessionOf(signup) };
    clock.advance(1_000);
    const switched = await accounts.switchOrg(caller, OTHER_ORG.id, { ip: '192.0.2.9', userAgent: 'agent/3' });
    expect(switched).toMatchObject({ user: { id: signup.user.id }, organization: { id: OTHER_ORG.id }, token_type: 'Bearer', refresh_token: expect.stringMatching(/^mrt_/) });
    const session = sessionOf(switched);
    expect(session).not.toBe(caller.session_id);
    expect(issued.at(-1)).toEqual({ userId: signup.user.id, sessionId: session, orgId: OTHER_ORG.id, envId: OTHER_ORG.default_env_id, role: 'viewer' });
    expect(users.sessions.get(session)).toMatchObject({ org_id: OTHER_ORG.id, ip: '192.0.2.9', user_agent: 'agent/3', created_at: clock.now(), revoked_at: null });
    expect(users.sessions.get(caller.session_id)).toMatchObject({ org_id: ORG.id, revoked_at: null });
    // Its refresh stays in the organization it switched to.
    await accounts.refresh(switched.refresh_token, {});
    expect(issued.at(-1)).toMatchObject({ sessionId: session, orgId: OTHER_ORG.id, role: 'viewer' });
  });

  it('answers not found for an organization the person does not belong to, and refuses an ended session', async () => {
    const { accounts, users } = setup();
    const signup = await accounts.signup(ada, {});
    const caller = { user_id: signup.user.id, session_id: sessionOf(signup) };
    await expect(accounts.switchOrg(caller, OTHER_ORG.id, {})).rejects.toMatchObject({ code: 'not_found', message: 'organization not found' });
    expect(users.sessions.size).toBe(1);
    await accounts.logout(caller.session_id);
    await expect(accounts.switchOrg(caller, ORG.id, {})).rejects.toMatchObject({ code: 'unauthorized' });
    // A session id of another person is not the caller's.
    const bob = await accounts.signup({ ...ada, email: 'bob@example.com' }, {});
    await expect(accounts.switchOrg({ user_id: signup.user.id, session_id: sessionOf(bob) }, ORG.id, {})).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('the profile', () => {
  it('sets and clears the name, answering the profile', async () => {
    const { accounts, clock } = setup();
    const { user } = await accounts.signup(ada, {});
    clock.advance(5_000);
    const named = await accounts.updateProfile(user.id, { name: 'Ada Lovelace' });
    expect(named).toEqual({ ...user, name: 'Ada Lovelace', updated_at: clock.now().toISOString() });
    expect(await accounts.me(user.id)).toEqual(named);
    expect((await accounts.updateProfile(user.id, { name: null })).name).toBeNull();
    expect(await accounts.updateProfile(user.id, {})).toEqual(await accounts.me(user.id));
    await expect(accounts.updateProfile('usr_01m8a4vabhcrd4hxzk162k1ma9', { name: 'x' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('signing in to a deleted account', () => {
  it('answers the right password with account_deleted within 30 days; a wrong one, or any after, as an unknown address', async () => {
    const { accounts, users, clock } = setup();
    const { user } = await accounts.signup(ada, {});
    users.users.get(user.id)!.deleted_at = clock.now();
    const unknown = await accounts.login({ ...ada, email: 'nobody@example.com' }, {}).catch((e: AppError) => [e.code, e.message]);
    expect(await accounts.login({ ...ada, password: 'wrong' }, {}).catch((e: AppError) => [e.code, e.message])).toEqual(unknown);
    await expect(accounts.login(ada, {})).rejects.toMatchObject({ code: 'account_deleted' });
    clock.advance(30 * 86_400_000 - 1);
    await expect(accounts.login(ada, {})).rejects.toMatchObject({ code: 'account_deleted' });
    clock.advance(1);
    expect(await accounts.login(ada, {}).catch((e: AppError) => [e.code, e.message])).toEqual(unknown);
  });

  it('keeps the sign-in time of the session a switch-org starts from (a switch proves nothing new)', async () => {
    const { accounts, users, join, clock } = setup();
    const signup = await accounts.signup(ada, {});
    join({ org_id: OTHER_ORG.id, org_name: OTHER_ORG.name, role: 'viewer', default_env_id: OTHER_ORG.default_env_id });
    clock.advance(10 * 60_000);
    const switched = await accounts.switchOrg({ user_id: signup.user.id, session_id: sessionOf(signup) }, OTHER_ORG.id, {});
    expect(users.sessions.get(sessionOf(switched))).toMatchObject({ created_at: clock.now(), authenticated_at: users.sessions.get(sessionOf(signup))!.created_at });
    expect(users.sessions.get(sessionOf(await accounts.login(ada, {})))!.authenticated_at).toEqual(clock.now());
  });
});

describe('login under the brute-force guard', () => {
  it('locks an email after 10 failed logins: the right password waits too, an unknown email answers the same; a lock-out is told once', async () => {
    const { accounts, clock, lockouts } = setup();
    await accounts.signup(ada, {});
    const answers = async (email: string, password: string) => accounts.login({ email, password }, {}).then(() => 'ok', (err: AppError) => [err.code, err.message, err.retryAfterSeconds]);
    const known: unknown[] = [];
    const unknown: unknown[] = [];
    for (let i = 0; i < 11; i++) {
      known.push(await answers(ada.email, `wrong ${i}`));
      unknown.push(await answers('nobody@example.com', `wrong ${i}`));
    }
    expect(known.slice(0, 10)).toEqual(Array(10).fill(['invalid_credentials', 'email or password is incorrect', undefined]));
    expect(known[10]).toEqual(['rate_limited', expect.stringMatching(/too many failed sign-ins .* refused for 900 s, even with the right password/), 900]);
    expect(unknown).toEqual(known);
    expect(await answers(ada.email, ada.password)).toEqual(known[10]);
    expect(lockouts.map((l) => [l.kind, l.identifier, l.lockedUntil.getTime() - clock.now().getTime()])).toEqual([
      ['login', ada.email, 900_000],
      ['login', 'nobody@example.com', 900_000],
    ]);

    clock.advance(900_000);
    expect(await answers(ada.email, ada.password)).toBe('ok');
  });

  it('forgets the failures once the right password is given', async () => {
    const { accounts } = setup();
    await accounts.signup(ada, {});
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 9; i++) await expect(accounts.login({ ...ada, password: 'wrong' }, {})).rejects.toMatchObject({ code: 'invalid_credentials' });
      await accounts.login(ada, {});
    }
  });
});
