/** Membership facts through the transactional outbox, as the orgs domain's MembershipFacts port. */
import { newId } from '@mailroom/contracts';
import type { Outbox } from '@mailroom/runtime';
import type { MembershipFacts } from '../domain/ports';
import type { OrgsDb } from '../repo/tables';

export function membershipFacts(outbox: Outbox<OrgsDb>): MembershipFacts {
  return {
    changed: (tx, fact) => outbox.addFact(tx, 'internal.orgs.member.changed', newId('event'), fact),
    kick: () => outbox.kick(),
  };
}
