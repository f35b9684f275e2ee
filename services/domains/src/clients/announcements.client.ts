/** domain.verified and the domains facts through the transactional outbox, as the domain's DomainAnnouncements port. */
import type { Outbox } from '@mailroom/runtime';
import type { DomainAnnouncements } from '../domain/ports';
import type { DomainsDb } from '../repo/tables';

export function announcements(outbox: Outbox<DomainsDb>): DomainAnnouncements {
  return {
    event: (tx, event) => outbox.add(tx, event),
    changed: (tx, id, fact) => outbox.addFact(tx, 'internal.domains.domain.changed', id, fact),
    audit: (tx, entry) => outbox.addFact(tx, 'audit.domains', entry.id, entry),
    kick: () => outbox.kick(),
  };
}
