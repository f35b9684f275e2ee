/**
 * Sessions without a database: signup, login, refresh rotation and reuse detection, logout.
 * The users store is an in-memory stand-in with the repository's semantics (one live
 * account per email, a refresh token used once); tokens and passwords are stand-ins too.
 */
import { AppError, type Membership, type Organization } from '@mailroom/contracts';
import { ManualClock, sha256 } from '@mailroom/platform';
import type { RefreshTokenRow, SessionRow, UserRow } from '../repo/user.repository';
import type { AuthTx } from '../repo/tables';
import { Accounts } from './accounts';
import type { OrgsPort, RevocationPort, Transact, Users } from './ports';

class MemoryUsers implements Users {
  readonly users = new Map<string, UserRow>();
  readonly sessions = new Map<string, SessionRow>();
  readonly tokens = new Map<string, RefreshTokenRow>();

  async insertUser(row: { id: string; email: string; password_hash: string; name: string | null; now: Date }): Promise<boolean> {
    if ([...this.users.values()].some((u) => u.email === row.email && u.deleted_at === null)) return false;
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
    return [...this.users.values()].filter((u) => ids.includes(u.id) && u.deleted_at === null).map(({ id, email, name }) => ({ id, email, name }));
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
  async revokeSession(id: string, reason: string, now: Date): Promise<boolean> {
    const s = this.sessions.get(id);
    if (!s || s.revoked_at) return false;
    Object.assign(s, { revoked_at: now, revoked_reason: reason });
    return true;
  }
  async touchSession(id: string, now: Date, expiresAt: Date): Promise<void> {
    const s = this.sessions.get(id);
    if (s) Object.assign(s, { last_refreshed_at: now, expires_at: expiresAt });
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
  const revoked: { session_id: string; tokens_valid_until: string }[] = [];
  let memberships: Membership[] = [];
  const orgs: OrgsPort = {
    createForOwner: async () => {
      memberships = [{ org_id: ORG.id, org_name: ORG.name, role: 'owner', default_env_id: ORG.default_env_id }];
      return { organization: ORG, environment: { id: ORG.default_env_id, org_id: ORG.id, name: 'production', is_default: true, created_at: ORG.created_at } };
    },
    memberships: async () => memberships,
    organization: async () => ORG,
    environment: async () => {
      throw AppError.notFound('environment');
    },
  };
  const revocations: RevocationPort = {
    sessionRevoked: async (fact) => void revoked.push(fact),
    apiKeyRevoked: async () => {},
  };
  // The stand-in store ignores the transaction it is handed; rollback is the database's job (integration tests).
  const transact: Transact = (work) => work({} as AuthTx);
  const passwords = { hash: async (p: string) => `hash:${p}`, verify: async (h: string | null | undefined, p: string) => h === `hash:${p}`, needsRehash: () => false };
  const tokens = { settings: { issuer: 'i', audience: 'a', ttlSeconds: 900 }, issue: async (c: { sessionId: string }) => ({ token: `at:${c.sessionId}`, expiresIn: 900 }) };
  const accounts = new Accounts(transact, users, passwords, tokens, orgs, revocations, clock, { refreshTokenTtlSeconds: 3_600 });
  return { accounts, users, clock, revoked, endMemberships: () => (memberships = []) };
}

const ada = { email: 'ada@example.com', password: 'correct horse battery' };


describe('Accounts', () => {
  it('signs up once per email, and logs in with the password only', async () => {
    const { accounts, users } = setup();
    const first = await accounts.signup(ada, {});
    expect(first).toMatchObject({ user: { email: ada.email }, organization: { id: ORG.id }, token_type: 'Bearer', refresh_token: expect.stringMatching(/^mrt_/) });
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
    const next = await accounts.refresh(refresh_token);
    expect(next.refresh_token).not.toBe(refresh_token);
    const session = [...users.sessions.values()][0]!;
    expect(session.last_refreshed_at).toEqual(clock.now());
    expect(session.expires_at).toEqual(new Date(clock.now().getTime() + 3_600_000));
    expect((await accounts.refresh(next.refresh_token)).access_token).toBe(`at:${session.id}`);
  });

  it('revokes the whole session when a spent refresh token comes back, and tells the gateways', async () => {
    const { accounts, users, revoked, clock } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    const next = await accounts.refresh(refresh_token);
    await expect(accounts.refresh(refresh_token)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/already used.*revoked/) });
    const session = [...users.sessions.values()][0]!;
    expect(session.revoked_reason).toBe('refresh_token_reuse');
    expect(revoked).toEqual([{ session_id: session.id, user_id: session.user_id, tokens_valid_until: new Date(clock.now().getTime() + 900_000).toISOString() }]);
    // The thief's newer token dies with the session.
    await expect(accounts.refresh(next.refresh_token)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('treats two refreshes racing with one token as reuse', async () => {
    const { accounts, users } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    const results = await Promise.allSettled([accounts.refresh(refresh_token), accounts.refresh(refresh_token)]);
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
    await expect(accounts.refresh(refresh_token)).rejects.toMatchObject({ message: expect.stringMatching(/invalid or expired/) });
    await accounts.logout('ses_unknown');
    expect(revoked).toHaveLength(1);
  });

  it('refuses a refresh past the session expiry, and ends a session whose membership ended', async () => {
    const expired = setup();
    const first = await expired.accounts.signup(ada, {});
    expired.clock.advance(3_600_001);
    await expect(expired.accounts.refresh(first.refresh_token)).rejects.toMatchObject({ code: 'unauthorized' });

    const left = setup();
    const { refresh_token } = await left.accounts.signup(ada, {});
    left.endMemberships();
    await expect(left.accounts.refresh(refresh_token)).rejects.toMatchObject({ code: 'unauthorized' });
    expect([...left.users.sessions.values()][0]!.revoked_reason).toBe('membership_ended');
    expect(left.revoked).toHaveLength(1);
  });

  it('gives other services the names and emails of live accounts, leaving unknown ids out', async () => {
    const { accounts } = setup();
    const { user } = await accounts.signup({ ...ada, name: 'Ada' }, {});
    expect(await accounts.profiles([user.id, user.id, 'usr_01m8a4vabhcrd4hxzk162k1ma9'])).toEqual([{ id: user.id, email: ada.email, name: 'Ada' }]);
    expect(await accounts.profiles([])).toEqual([]);
  });

  it('stores only hashes of refresh tokens', async () => {
    const { accounts, users } = setup();
    const { refresh_token } = await accounts.signup(ada, {});
    expect([...users.tokens.values()].map((t) => t.token_hash)).toEqual([sha256(refresh_token)]);
  });
});
