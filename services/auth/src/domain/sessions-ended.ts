/**
 * Ending a person's sessions after their password changed: revoked in the caller's
 * transaction, with one revocation fact each written beside it (the outbox), so gateways
 * refuse the sessions' access tokens within a second of the commit and no refresh works.
 */
import type { CredentialRepository } from '../repo/credential.repository';
import type { AuthTx } from '../repo/tables';
import type { AccountOutbox } from './ports';
import { revocationFact } from './sessions';

export async function endSessions(
  tx: AuthTx,
  deps: { credentials: Pick<CredentialRepository, 'revokeSessionsOf'>; outbox: Pick<AccountOutbox, 'sessionRevoked'>; accessTokenTtlSeconds: number },
  userId: string,
  opts: { reason: string; now: Date; except?: string | undefined },
): Promise<number> {
  const ended = await deps.credentials.revokeSessionsOf(userId, opts, tx);
  for (const id of ended) await deps.outbox.sessionRevoked(tx, revocationFact({ id, user_id: userId }, opts.now, deps.accessTokenTtlSeconds));
  return ended.length;
}
