/**
 * Attempts at an outside provider without a database: the state given out, the nonce and
 * PKCE verifier kept sealed under the state's hash, each attempt working once, for 10
 * minutes (ManualClock), on its own provider's callback and for its own person.
 */
import { DEVELOPMENT_ENCRYPTION_KEY, SecretBox, sha256 } from '@mailroom/platform';
import { clockAt } from '../../test/memory-credentials';
import { FakeProvider, MemoryOAuth } from '../../test/memory-oauth';
import { ATTEMPT_TTL_MS, OAuthAttempts, attemptAccepted } from './oauth-attempts';

function setup() {
  const clock = clockAt();
  const store = new MemoryOAuth();
  const provider = new FakeProvider();
  const attempts = new OAuthAttempts(store, new SecretBox(DEVELOPMENT_ENCRYPTION_KEY), clock);
  return { clock, store, provider, attempts };
}

const signIn = { provider: 'acme', userId: null };

describe('OAuthAttempts', () => {
  it('gives a state and the authorization URL, and keeps only the state hash and the sealed checks', async () => {
    const { attempts, store, provider, clock } = setup();
    const started = await attempts.start(provider, signIn);
    expect(started).toEqual({ authorization_url: expect.stringMatching(/^https:\/\/id\.example\.com\/authorize\?state=mro_/), state: expect.stringMatching(/^mro_[A-Za-z0-9_-]{43}$/), expires_at: new Date(clock.now().getTime() + ATTEMPT_TTL_MS).toISOString() });
    const [row] = store.attempts;
    expect(row).toMatchObject({ state_hash: sha256(started.state), provider: 'acme', user_id: null, used_at: null });
    const nonce = new URL(started.authorization_url).searchParams.get('nonce')!;
    expect(row!.secrets_sealed.includes(Buffer.from(nonce))).toBe(false);
    expect(row!.secrets_sealed.includes(Buffer.from(started.state))).toBe(false);
  });

  it('gives back the checks the provider was sent, once', async () => {
    const { attempts, provider } = setup();
    const started = await attempts.start(provider, signIn);
    const checks = await attempts.take(started.state, signIn);
    expect(checks).toEqual({ state: started.state, nonce: new URL(started.authorization_url).searchParams.get('nonce'), codeVerifier: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    await expect(attempts.take(started.state, signIn)).rejects.toMatchObject({ code: 'invalid_state', status: 400 });
    await expect(attempts.take('mro_' + 'x'.repeat(43), signIn)).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('works for 10 minutes, not at the 10th', async () => {
    const { attempts, provider, clock } = setup();
    const early = await attempts.start(provider, signIn);
    const late = await attempts.start(provider, signIn);
    clock.advance(ATTEMPT_TTL_MS - 1);
    await expect(attempts.take(early.state, signIn)).resolves.toMatchObject({ state: early.state });
    clock.advance(1);
    await expect(attempts.take(late.state, signIn)).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('is refused on another provider, on a sign-in when it links, and to anyone but the person who started it', async () => {
    const { attempts, provider } = setup();
    const link = { provider: 'acme', userId: 'usr_ada' };
    const eve = { provider: 'acme', userId: 'usr_eve' };
    for (const [owner, other] of [
      [signIn, { provider: 'github', userId: null }],
      [link, signIn],
      [link, eve],
      [signIn, link],
    ] as const) {
      const started = await attempts.start(provider, owner);
      await expect(attempts.take(started.state, other)).rejects.toMatchObject({ code: 'invalid_state' });
      // Spent by the refused try: a state that went astray is not tried twice.
      await expect(attempts.take(started.state, owner)).rejects.toMatchObject({ code: 'invalid_state' });
    }
    const mine = await attempts.start(provider, link);
    await expect(attempts.take(mine.state, { provider: 'acme', userId: 'usr_ada' })).resolves.toMatchObject({ state: mine.state });
  });

  it('forgets attempts past their time as new ones are made', async () => {
    const { attempts, provider, store, clock } = setup();
    await attempts.start(provider, signIn);
    clock.advance(ATTEMPT_TTL_MS + 1);
    await attempts.start(provider, signIn);
    expect(store.attempts).toHaveLength(1);
  });

  it('accepts by provider, person and time (the rule alone)', () => {
    const now = new Date('2026-11-28T12:00:00.000Z');
    const row = { provider: 'google', user_id: null, expires_at: new Date(now.getTime() + 1) };
    expect(attemptAccepted(row, { provider: 'google', userId: null }, now)).toBe(true);
    expect(attemptAccepted(undefined, { provider: 'google', userId: null }, now)).toBe(false);
    expect(attemptAccepted({ ...row, expires_at: now }, { provider: 'google', userId: null }, now)).toBe(false);
    expect(attemptAccepted({ ...row, user_id: 'usr_a' }, { provider: 'google', userId: 'usr_a' }, now)).toBe(true);
  });
});
