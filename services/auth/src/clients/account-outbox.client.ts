/** Account mail, revocation facts and audit entries through the transactional outbox, as the auth domain's AccountOutbox. */
import type { Outbox } from '@mailroom/runtime';
import type { AccountOutbox } from '../domain/ports';
import type { AuthDb } from '../repo/tables';

export function accountOutbox(outbox: Outbox<AuthDb>): AccountOutbox {
  return {
    mail: (tx, mail) => outbox.addWork(tx, 'mail.account', mail.id, mail),
    // One row per announcement, like the revocations client's msgIDs: repeating one repeats it.
    sessionRevoked: (tx, fact) => outbox.addFact(tx, 'internal.auth.session.revoked', `revoke-${fact.session_id}-${Date.parse(fact.tokens_valid_until)}`, fact),
    audit: (tx, entry) => outbox.addFact(tx, 'audit.auth', entry.id, entry),
    kick: () => outbox.kick(),
  };
}
