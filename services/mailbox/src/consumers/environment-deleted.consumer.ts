/** Consumer of `internal.orgs.environment.deleted`: the environment's inboxes are deleted, and none is made there again. */
import type { Bus, RunningConsumer } from '@mailroom/messaging';
import { followEnvironmentDeletions } from '@mailroom/runtime';
import type { Inboxes } from '../domain/inboxes';

export function startEnvironmentDeletedConsumer(bus: Bus, inboxes: Inboxes): Promise<RunningConsumer> {
  return followEnvironmentDeletions(bus, { service: 'mailbox', durable: 'mailbox--environment-deleted', remove: (fact) => inboxes.environmentDeleted(fact) });
}
