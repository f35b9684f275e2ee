/**
 * Attempts at signing in with an outside provider, or at linking one to a signed-in person's
 * account. Each has a state (`mro_` + 32 random bytes, given to the client and carried by
 * the provider's redirect), a nonce and a PKCE verifier; the server keeps the state's
 * SHA-256 as the key and the other two sealed. An attempt works once (taken, even by a
 * callback that then fails), for 10 minutes, on the callback of its own provider and kind:
 * a link attempt only for the person who started it. Every refusal is one answer.
 */
import { z } from 'zod';
import { AppError, type OAuthAuthorization } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { OAuthAttemptRow, OAuthRepository } from '../repo/oauth.repository';
import type { AttemptChecks, OAuthProviderPort, Sealer } from './ports';
import { bindingHash, OTHER_BROWSER, sameBrowser } from './browser-binding';

export const ATTEMPT_TTL_MS = 10 * 60_000;
export const STATE_PREFIX = 'mro_';

const sealedChecks = z.object({ nonce: z.string(), codeVerifier: z.string() });

export const INVALID_STATE = 'this sign-in attempt is unknown, was used already, expired (attempts last 10 minutes) or belongs to another provider or person; start again';

/** Whom a callback is for: a sign-in (nobody signed in) or the person linking a provider. */
export interface AttemptOwner {
  provider: string;
  userId: string | null;
}

/** Whether the attempt taken (undefined: none or used) may be completed by this callback, at `now`. */
export function attemptAccepted(row: Pick<OAuthAttemptRow, 'provider' | 'user_id' | 'expires_at'> | undefined, owner: AttemptOwner, now: Date): boolean {
  return row !== undefined && row.provider === owner.provider && row.user_id === owner.userId && now.getTime() < row.expires_at.getTime();
}

export class OAuthAttempts {
  constructor(
    private readonly attempts: Pick<OAuthRepository, 'insertAttempt' | 'takeAttempt' | 'deleteAttemptsExpiredBefore'>,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {}

  /** A new attempt of `owner` at `provider`: where to send the person, and its state. */
  async start(provider: OAuthProviderPort, owner: AttemptOwner, browser?: string): Promise<OAuthAuthorization> {
    const now = this.clock.now();
    const checks: AttemptChecks = { state: randomToken(STATE_PREFIX), nonce: randomToken(''), codeVerifier: randomToken('') };
    const url = await provider.authorizationUrl(checks);
    const expiresAt = new Date(now.getTime() + ATTEMPT_TTL_MS);
    // Attempts nobody finished are not kept past their time (an index on expires_at makes it cheap).
    await this.attempts.deleteAttemptsExpiredBefore(now);
    const secrets = JSON.stringify({ nonce: checks.nonce, codeVerifier: checks.codeVerifier });
    await this.attempts.insertAttempt({
      state_hash: sha256(checks.state),
      provider: owner.provider,
      user_id: owner.userId,
      secrets_sealed: this.sealer.seal(secrets, associated(owner.provider)),
      created_at: now,
      expires_at: expiresAt,
      browser_binding_hash: bindingHash(browser),
    });
    return { authorization_url: url, state: checks.state, expires_at: expiresAt.toISOString() };
  }

  /** Takes the attempt of `state` for `owner` (it works no more) and returns its checks; invalid_state otherwise. */
  async take(state: string, owner: AttemptOwner, browser?: string): Promise<AttemptChecks> {
    const now = this.clock.now();
    const row = await this.attempts.takeAttempt(sha256(state), now);
    if (!row || !attemptAccepted(row, owner, now)) throw new AppError('invalid_state', INVALID_STATE);
    if (!sameBrowser(row.browser_binding_hash, browser)) throw new AppError('invalid_state', OTHER_BROWSER);
    const secrets = sealedChecks.parse(JSON.parse(this.sealer.open(row.secrets_sealed, associated(row.provider)).toString('utf8')));
    return { state, ...secrets };
  }
}

/** Sealed for its provider: a row moved to another provider does not open. */
function associated(provider: string): string {
  return `oauth-attempt:${provider}`;
}
