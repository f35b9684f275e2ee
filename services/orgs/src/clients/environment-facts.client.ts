/** Environment facts through the transactional outbox, as the orgs domain's EnvironmentFacts port. */
import { newId } from '@mailroom/contracts';
import type { Outbox } from '@mailroom/runtime';
import type { EnvironmentFacts } from '../domain/ports';
import type { OrgsDb } from '../repo/tables';

export function environmentFacts(outbox: Outbox<OrgsDb>): EnvironmentFacts {
  return {
    memberChanged: (tx, fact) => outbox.addFact(tx, 'internal.orgs.environment.member.changed', newId('event'), fact),
    deleted: (tx, fact) => outbox.addFact(tx, 'internal.orgs.environment.deleted', newId('event'), fact),
    kick: () => outbox.kick(),
  };
}
