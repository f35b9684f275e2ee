/**
 * SSO login attempts: a state (`mrs_` + 32 random bytes, given to the client, carried by the
 * provider's redirect), a nonce and a PKCE verifier. The server keeps the state's SHA-256 as
 * the key, the other two sealed (bound to the configuration), and the configuration it was
 * started with. An attempt works once (taken even by a callback that then fails), for 10
 * minutes. Every refusal is one answer.
 */
import { z } from 'zod';
import { AppError } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { SsoRepository } from '../repo/sso.repository';
import type { AttemptChecks, Sealer } from './ports';
import { bindingHash, OTHER_BROWSER, sameBrowser } from './browser-binding';

export const SSO_ATTEMPT_TTL_MS = 10 * 60_000;
export const SSO_STATE_PREFIX = 'mrs_';
export const INVALID_SSO_STATE = 'this SSO attempt is unknown, was used already or expired (attempts last 10 minutes); start again';

const sealedChecks = z.object({ nonce: z.string(), codeVerifier: z.string() });

const associated = (configId: string) => `sso-attempt:${configId}`;

export class SsoAttempts {
  constructor(
    private readonly repo: Pick<SsoRepository, 'insertAttempt' | 'takeAttempt' | 'deleteAttemptsExpiredBefore'>,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {}

  /** New checks for an attempt with `configId`; `record` stores them once the authorization URL is made. */
  checks(): AttemptChecks {
    return { state: randomToken(SSO_STATE_PREFIX), nonce: randomToken(''), codeVerifier: randomToken('') };
  }

  /** Stores the attempt, bound to the starting browser's secret when one started it. */
  async record(configId: string, checks: AttemptChecks, browser?: string): Promise<Date> {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + SSO_ATTEMPT_TTL_MS);
    // Attempts nobody finished are not kept past their time.
    await this.repo.deleteAttemptsExpiredBefore(now);
    await this.repo.insertAttempt({
      state_hash: sha256(checks.state),
      config_id: configId,
      secrets_sealed: this.sealer.seal(JSON.stringify({ nonce: checks.nonce, codeVerifier: checks.codeVerifier }), associated(configId)),
      created_at: now,
      expires_at: expiresAt,
      browser_binding_hash: bindingHash(browser),
    });
    return expiresAt;
  }

  /** Takes the attempt of `state` (it works no more): its configuration and checks; invalid_state otherwise. */
  async take(state: string, browser?: string): Promise<{ configId: string; checks: AttemptChecks }> {
    const now = this.clock.now();
    const row = await this.repo.takeAttempt(sha256(state), now);
    if (!row || now.getTime() >= row.expires_at.getTime()) throw new AppError('invalid_state', INVALID_SSO_STATE);
    if (!sameBrowser(row.browser_binding_hash, browser)) throw new AppError('invalid_state', OTHER_BROWSER);
    const secrets = sealedChecks.parse(JSON.parse(this.sealer.open(row.secrets_sealed, associated(row.config_id)).toString('utf8')));
    return { configId: row.config_id, checks: { state, ...secrets } };
  }
}
