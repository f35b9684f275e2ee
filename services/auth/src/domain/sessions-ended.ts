/**
 * Ending a person's sessions after their password changed: revoked in the caller's
 * transaction, with one revocation fact each written beside it (the outbox), so gateways
 * refuse the sessions' access tokens within a second of the commit and no refresh works.
 */
import type { CredentialRepository } from '../repo/credential.repository';
import type { AuthTx } from '../repo/tables';
import type { AccountOutbox } from './ports';

export async function endSessions(
  tx: AuthTx,
  deps: { credentials: Pick<CredentialRepository, 'revokeSessionsOf'>; outbox: Pick<AccountOutbox, 'sessionRevoked'>; accessTokenTtlSeconds: number },
  userId: string,
  opts: { reason: string; now: Date; except?: string | undefined },
): Promise<number> {
  const ended = await deps.credentials.revokeSessionsOf(userId, opts, tx);
  // No access token of these sessions outlives this: gateways may forget them after it.
  const validUntil = new Date(opts.now.getTime() + deps.accessTokenTtlSeconds * 1000).toISOString();
  for (const sessionId of ended) await deps.outbox.sessionRevoked(tx, { session_id: sessionId, user_id: userId, tokens_valid_until: validUntil });
  return ended.length;
}
