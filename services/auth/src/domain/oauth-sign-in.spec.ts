/**
 * Signing in with an outside provider, and linking and unlinking one, without a database:
 * a first sign-in makes an account (verified only when the provider says so), the next signs
 * it in; a verified address links to its account (taking over one that never proved it); an
 * unverified one is not linked; a link is the signed-in person's own; the last way to sign in
 * stays. The provider is a stand-in that says whoever the spec tells it to.
 */
import { AppError, type Organization, type SessionResponse } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, SecretBox } from '@mailroom/platform';
import { clockAt, MemoryCredentials, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { FakeProvider, MemoryOAuth } from '../../test/memory-oauth';
import type { UserRow } from '../repo/user.repository';
import type { NewAccount } from './accounts';
import { OAuthAttempts } from './oauth-attempts';
import { OAuthLinks } from './oauth-links';
import { OAuthSignIn } from './oauth-sign-in';
import type { AuthTx } from '../repo/tables';
import { toUser } from './users';

const ORG: Organization = { id: 'org_01', name: 'Org', plan: 'free', status: 'active', default_env_id: 'env_01', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };

function setup() {
  const clock = clockAt('2026-11-28T12:00:00.000Z');
  const store = new MemoryCredentials();
  const oauth = new MemoryOAuth();
  const outbox = new MemoryOutbox();
  const acme = new FakeProvider();
  const providers = new Map([['acme', acme]]);
  const session = (user: UserRow): SessionResponse => ({ user: toUser(user), organization: ORG, access_token: `at:${user.id}`, refresh_token: 'rt', token_type: 'Bearer', expires_in: 900 });
  const created: NewAccount[] = [];
  let made = 0;
  // Accounts.create as its spec (accounts.spec.ts) has it: the account, then what the caller links with it.
  const accounts = {
    create: async (account: NewAccount, _client: unknown, within?: (tx: AuthTx, userId: string) => Promise<void>) => {
      created.push(account);
      const user = Object.assign(store.addUser(`usr_new${++made}`, account.email), { password_hash: account.passwordHash, name: account.name, email_verified_at: account.emailVerifiedAt });
      await within?.(Object.create(null) as AuthTx, user.id);
      return session(user);
    },
  };
  const opened: string[] = [];
  const start = { signIn: async (user: UserRow) => (opened.push(user.id), session(user)) };
  const attempts = new OAuthAttempts(oauth, new SecretBox(DEVELOPMENT_ENCRYPTION_KEY), clock);
  // People with MFA on (mfa-login.spec.ts has the second step): their sign-in answers its challenge.
  const withMfa = new Set<string>();
  const secondFactor = {
    required: async (userId: string) => withMfa.has(userId),
    challenge: async () => ({ mfa_required: true as const, mfa_token: 'mrm_challenge', expires_in: 300 }),
  };
  const mfa = { remove: async (userId: string) => void withMfa.delete(userId), removeRecoveryCodes: async () => undefined };
  const deleted = { refuseSignIn: async (user: UserRow) => new AppError('account_deleted', `recover ${user.id}`) };
  // API keys each person made (the takeover revokes the squatter's), and the revocations announced.
  const keysOf = new Map<string, { id: string; org_id: string }[]>();
  const announcedKeys: string[] = [];
  const apiKeys = { revokeCreatedBy: async (userId: string) => (keysOf.get(userId) ?? []).splice(0) };
  const revocations = { apiKeyRevoked: async (fact: { key_id: string }) => void announcedKeys.push(fact.key_id) };
  const signIn = new OAuthSignIn({
    transact: memoryTransact,
    providers,
    attempts,
    identities: oauth,
    users: store,
    accounts,
    start,
    secondFactor,
    mfa,
    deletedAccounts: store,
    deleted,
    apiKeys,
    revocations,
    credentials: store,
    outbox,
    clock,
    accessTokenTtlSeconds: 900,
  });
  const lockAccount = async (userId: string) => {
    const u = await store.findLiveById(userId);
    return u && { has_password: u.password_hash !== null };
  };
  const links = new OAuthLinks(memoryTransact, { ...oauth, listIdentities: (id: string) => oauth.listIdentities(id), deleteIdentity: (id: string, p: string) => oauth.deleteIdentity(id, p), lockAccount }, (name) => providers.has(name));
  /** A whole sign-in: the attempt, then the callback with its state; `answerOf` as it comes, `signInWith` a session. */
  const answerOf = async (provider = 'acme') => {
    const { state } = await signIn.begin(provider);
    return signIn.complete(provider, { code: 'code', state }, {});
  };
  const signInWith = async (provider = 'acme'): Promise<SessionResponse> => {
    const answer = await answerOf(provider);
    if ('mfa_required' in answer) throw new Error('the sign-in asked for a second factor');
    return answer;
  };
  const linkWith = async (userId: string) => {
    const { state } = await signIn.beginLink(userId, 'acme');
    return signIn.completeLink(userId, 'acme', { code: 'code', state });
  };
  return { clock, store, oauth, outbox, acme, signIn, links, created, opened, signInWith, answerOf, linkWith, withMfa, keysOf, announcedKeys };
}

describe('OAuthSignIn: signing in', () => {
  it('makes an account on the first sign-in (no password; the address verified as the provider says), then signs it in', async () => {
    const { signInWith, acme, created, oauth, store, opened, clock } = setup();
    const first = await signInWith();
    expect(created).toEqual([{ email: 'ada@example.com', name: 'Ada', passwordHash: null, emailVerifiedAt: clock.now() }]);
    expect(first.user).toMatchObject({ email: 'ada@example.com', email_verified: true });
    expect(oauth.identities).toEqual([{ provider: 'acme', subject: 'sub-1', user_id: first.user.id, email: 'ada@example.com', linked_at: clock.now(), last_used_at: clock.now() }]);
    // The provider was asked with the checks of this attempt.
    expect(acme.seen[0]!.checks).toEqual({ state: acme.seen[0]!.callback.state, nonce: expect.any(String), codeVerifier: expect.any(String) });

    clock.advance(60_000);
    // The address at the provider changed, and it no longer says it is verified: the link is what counts.
    acme.next = { ...acme.next, email: 'Ada.Lovelace@Example.com', emailVerified: false };
    const again = await signInWith();
    expect(again.user.id).toBe(first.user.id);
    expect(opened).toEqual([first.user.id]);
    expect(created).toHaveLength(1);
    expect(oauth.identities[0]).toMatchObject({ email: 'ada.lovelace@example.com', last_used_at: clock.now() });
    expect(store.users.size).toBe(1);
  });

  it('makes an account with its address unverified when the provider does not vouch for it', async () => {
    const { signInWith, acme, created } = setup();
    acme.next = { subject: 'sub-2', email: 'bob@example.com', emailVerified: false, name: '  ' };
    expect((await signInWith()).user).toMatchObject({ email: 'bob@example.com', email_verified: false, name: null });
    expect(created[0]).toMatchObject({ emailVerifiedAt: null, name: null });
  });

  it('links a verified address to its account and signs it in; the password stays', async () => {
    const { signInWith, store, oauth, outbox } = setup();
    const ada = store.addUser('usr_ada', 'ada@example.com', 'hash:pw');
    ada.email_verified_at = new Date('2026-01-02T00:00:00.000Z');
    store.addSession('ses_1', 'usr_ada');
    expect((await signInWith()).user.id).toBe('usr_ada');
    expect(oauth.identities).toMatchObject([{ provider: 'acme', user_id: 'usr_ada' }]);
    expect(store.users.get('usr_ada')).toMatchObject({ password_hash: 'hash:pw', email_verified_at: new Date('2026-01-02T00:00:00.000Z') });
    expect(outbox.facts).toEqual([]);
  });

  it('asks an account with MFA on for its second factor, as login does: a provider proves the address, not the second factor', async () => {
    const { answerOf, store, withMfa, opened } = setup();
    const ada = store.addUser('usr_ada', 'ada@example.com', 'hash:pw');
    ada.email_verified_at = new Date('2026-01-02T00:00:00.000Z');
    withMfa.add('usr_ada');
    expect(await answerOf()).toEqual({ mfa_required: true, mfa_token: 'mrm_challenge', expires_in: 300 });
    // Linked now: the next sign-in asks again.
    expect(await answerOf()).toMatchObject({ mfa_required: true });
    expect(opened).toEqual([]);
  });

  it('drops the second factor and revokes the API keys of an account it takes over: whoever pre-registered the address made them', async () => {
    const { answerOf, store, withMfa, keysOf, announcedKeys } = setup();
    store.addUser('usr_pre', 'ada@example.com', 'hash:set by someone');
    withMfa.add('usr_pre');
    keysOf.set('usr_pre', [{ id: 'key_squatter', org_id: 'org_01' }]);
    expect(await answerOf()).toMatchObject({ user: { id: 'usr_pre' } });
    expect(withMfa.has('usr_pre')).toBe(false);
    expect(announcedKeys).toEqual(['key_squatter']);
  });

  it('answers a deleted account as login does: its recovery token (password-less accounts come back this way), after the second factor when MFA is on', async () => {
    const { answerOf, signInWith, store, withMfa, clock, opened } = setup();
    // A first sign-in makes an account without a password.
    const id = (await signInWith()).user.id;
    expect(store.users.get(id)!.password_hash).toBeNull();
    store.users.get(id)!.deleted_at = clock.now();
    opened.length = 0;
    await expect(answerOf()).rejects.toMatchObject({ code: 'account_deleted', message: `recover ${id}` });
    withMfa.add(id);
    expect(await answerOf()).toMatchObject({ mfa_required: true });
    // Past the 30 days: as an account that is gone.
    clock.advance(30 * 86_400_000);
    await expect(answerOf()).rejects.toMatchObject({ code: 'forbidden' });
    expect(opened).toEqual([]);
  });

  it('takes over an account that never proved its address: its password, other links and sessions go', async () => {
    const { signInWith, store, oauth, outbox, clock } = setup();
    store.addUser('usr_pre', 'ada@example.com', 'hash:set by someone');
    store.addSession('ses_pre', 'usr_pre');
    oauth.identities.push({ provider: 'github', subject: 'gh-eve', user_id: 'usr_pre', email: 'eve@example.com', linked_at: clock.now(), last_used_at: null });
    const res = await signInWith();
    expect(res.user).toMatchObject({ id: 'usr_pre', email_verified: true });
    expect(store.users.get('usr_pre')!.password_hash).toBeNull();
    expect(oauth.identities.map((i) => [i.provider, i.user_id])).toEqual([['acme', 'usr_pre']]);
    expect(store.sessions.get('ses_pre')).toMatchObject({ revoked_reason: 'address_proven_by_provider' });
    expect(outbox.facts).toEqual([expect.objectContaining({ session_id: 'ses_pre', user_id: 'usr_pre' })]);
  });

  it('does not link an address the provider does not say is verified (409), and links nothing', async () => {
    const { signInWith, store, oauth, acme } = setup();
    store.addUser('usr_ada', 'ada@example.com');
    acme.next = { ...acme.next, emailVerified: false };
    await expect(signInWith()).rejects.toMatchObject({ code: 'email_taken', status: 409, message: expect.stringMatching(/not linked to that account: sign in with your password, then link acme/) });
    expect(oauth.identities).toEqual([]);
  });

  it('answers 404 for a provider that is not configured, before any attempt', async () => {
    const { signIn, oauth } = setup();
    await expect(signIn.begin('github')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    await expect(signIn.complete('github', { code: 'c', state: 'mro_x' }, {})).rejects.toMatchObject({ code: 'not_found' });
    expect(oauth.attempts).toEqual([]);
  });

  it('refuses a state used already, and one of a link attempt', async () => {
    const { signIn } = setup();
    const { state } = await signIn.begin('acme');
    await signIn.complete('acme', { code: 'code', state }, {});
    await expect(signIn.complete('acme', { code: 'code', state }, {})).rejects.toMatchObject({ code: 'invalid_state', status: 400 });
    const link = await signIn.beginLink('usr_ada', 'acme');
    await expect(signIn.complete('acme', { code: 'code', state: link.state }, {})).rejects.toMatchObject({ code: 'invalid_state' });
  });
});

describe('OAuthSignIn: linking', () => {
  it('links the identity to the signed-in person who started it, whatever its address', async () => {
    const { linkWith, store, acme, oauth, clock } = setup();
    store.addUser('usr_ada', 'ada@example.com');
    acme.next = { subject: 'sub-9', email: 'someone.else@example.org', emailVerified: false, name: null };
    expect(await linkWith('usr_ada')).toEqual({ provider: 'acme', email: 'someone.else@example.org', linked_at: clock.now().toISOString(), last_used_at: null });
    // Again: the same link.
    expect(await linkWith('usr_ada')).toMatchObject({ provider: 'acme', email: 'someone.else@example.org' });
    expect(oauth.identities).toHaveLength(1);
  });

  it('refuses an identity linked to another account, and a second identity of the provider', async () => {
    const { linkWith, store, acme } = setup();
    store.addUser('usr_ada', 'ada@example.com');
    store.addUser('usr_eve', 'eve@example.com');
    await linkWith('usr_ada');
    await expect(linkWith('usr_eve')).rejects.toMatchObject({ code: 'conflict', status: 409 });
    acme.next = { ...acme.next, subject: 'sub-other' };
    await expect(linkWith('usr_ada')).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/unlink it first/) });
  });

  it('completes a link only for the person who started it', async () => {
    const { signIn } = setup();
    const { state } = await signIn.beginLink('usr_ada', 'acme');
    await expect(signIn.completeLink('usr_eve', 'acme', { code: 'code', state })).rejects.toMatchObject({ code: 'invalid_state' });
  });
});

describe('OAuthLinks', () => {
  it('lists the links and unlinks one unless it is the last way to sign in', async () => {
    const { signInWith, links, store } = setup();
    const { user } = await signInWith();
    expect(await links.list(user.id)).toEqual({ data: [{ provider: 'acme', email: 'ada@example.com', linked_at: expect.any(String), last_used_at: expect.any(String) }], next_page_token: null });
    await expect(links.unlink(user.id, 'acme')).rejects.toMatchObject({ code: 'conflict', status: 409 });
    await expect(links.unlink(user.id, 'github')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    await store.updatePasswordHash(user.id, 'hash:now a password', new Date());
    await links.unlink(user.id, 'acme');
    expect((await links.list(user.id)).data).toEqual([]);
  });
});
