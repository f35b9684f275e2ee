/** Proving again who one is, signed in: the password, counted with change-password's failures; without one, a sign-in under 5 minutes old. */
import { refusalOf } from '@mailroom/testing';
import { clockAt } from '../../test/memory-credentials';
import { FRESH_SIGN_IN_MS, IdentityProof } from './identity-proof';
import { CHANGE_FAILURES, type FailureLimiter } from './password-change';

/** Counts failures per key; the window is the real limiter's business (clients/failure-limiter.client.spec.ts). */
function countingLimiter(): FailureLimiter & { failures: Map<string, number> } {
  const failures = new Map<string, number>();
  return {
    failures,
    wait: async (key) => ((failures.get(key) ?? 0) >= CHANGE_FAILURES.count ? 42 : undefined),
    failed: async (key) => void failures.set(key, (failures.get(key) ?? 0) + 1),
  };
}

function setup() {
  const clock = clockAt();
  const limiter = countingLimiter();
  const passwords = { verify: async (h: string | null | undefined, p: string) => h === `hash:${p}` };
  return { clock, limiter, proof: new IdentityProof(passwords, limiter, clock) };
}

const withPassword = { id: 'usr_ada', password_hash: 'hash:old password' };
const withoutPassword = { id: 'usr_oauth', password_hash: null };

describe('IdentityProof', () => {
  it('takes the password of an account that has one; wrong is 403 and counted, missing is 400', async () => {
    const { proof, limiter } = setup();
    await proof.require(withPassword, undefined, 'old password', 'password');
    const wrong = await refusalOf(proof.require(withPassword, undefined, 'guess', 'password'));
    expect([wrong.code, wrong.details]).toEqual(['forbidden', [{ path: 'body.password', message: 'is incorrect' }]]);
    expect(limiter.failures.get('usr_ada')).toBe(1);
    const missing = await refusalOf(proof.require(withPassword, undefined, undefined, 'current_password'));
    expect([missing.code, missing.details]).toEqual(['invalid_request', [{ path: 'body.current_password', message: 'required' }]]);
  });

  it('refuses even the right password once the failures are over the limit, with when to try again', async () => {
    const { proof, limiter } = setup();
    limiter.failures.set('usr_ada', CHANGE_FAILURES.count);
    const refusal = await refusalOf(proof.require(withPassword, undefined, 'old password', 'password'));
    expect([refusal.code, refusal.retryAfterSeconds]).toEqual(['rate_limited', 42]);
  });

  it('takes, for an account without a password, a sign-in less than 5 minutes old, and nothing else', async () => {
    const { proof, clock } = setup();
    const signedIn = { authenticated_at: clock.now(), method: 'oauth' };
    clock.advance(FRESH_SIGN_IN_MS - 1);
    await proof.require(withoutPassword, signedIn, undefined, 'password');
    clock.advance(1);
    const stale = await refusalOf(proof.require(withoutPassword, signedIn, undefined, 'password'));
    expect([stale.code, stale.message]).toEqual(['forbidden', expect.stringMatching(/sign in again and retry within 5 minutes/)]);
    // No session (ended meanwhile): no proof either; a password given to such an account proves nothing.
    expect((await refusalOf(proof.require(withoutPassword, undefined, 'anything', 'password'))).code).toBe('forbidden');
  });

  it("never takes a single sign-on session, however fresh: the organization's provider vouches for the address, not the account", async () => {
    const { proof, clock } = setup();
    const refusal = await refusalOf(proof.require(withoutPassword, { authenticated_at: clock.now(), method: 'sso' }, undefined, 'password'));
    expect([refusal.code, refusal.message]).toEqual(['forbidden', expect.stringContaining('single sign-on session cannot prove')]);
  });
});
