/** Audit entries through the transactional outbox (audit.orgs), as the orgs domain's AuditTrail port. */
import type { Outbox } from '@mailroom/runtime';
import type { AuditTrail } from '../domain/ports';
import type { OrgsDb } from '../repo/tables';

export function auditTrail(outbox: Outbox<OrgsDb>): AuditTrail {
  return {
    record: (tx, entry) => outbox.addFact(tx, 'audit.orgs', entry.id, entry),
    kick: () => outbox.kick(),
  };
}
