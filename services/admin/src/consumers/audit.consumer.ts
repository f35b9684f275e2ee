/**
 * `admin--audit`: the durable consumer of every service's audit entries (`audit.<service>`).
 * The subject names the service (its seal proves it, libs/messaging); an entry of an action
 * another service does is terminated with an error in the log, never stored.
 */
import type { ConsumerName } from '@mailroom/contracts';
import { runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { AuditLog } from '../domain/audit-log';

export const AUDIT_CONSUMER: ConsumerName = 'admin--audit';

export function runAuditConsumer(bus: Bus, log: Pick<AuditLog, 'received'>): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject: 'audit.>',
    durable: AUDIT_CONSUMER,
    handler: async (entry, meta) => {
      const source = meta.subject.split('.')[1] ?? '';
      const outcome = await log.received(source, entry);
      if (outcome === 'refused') return { term: `${source} does not do ${entry.action}: not stored` };
      return 'ack';
    },
  });
}
