/** Consumer of `internal.orgs.environment.deleted`: the environment's domains are deleted, and none is added there again. */
import type { Bus, RunningConsumer } from '@mailroom/messaging';
import { followEnvironmentDeletions } from '@mailroom/runtime';
import type { Domains } from '../domain/domains';

export function startEnvironmentDeletedConsumer(bus: Bus, domains: Domains): Promise<RunningConsumer> {
  return followEnvironmentDeletions(bus, { service: 'domains', durable: 'domains--environment-deleted', remove: (fact) => domains.environmentDeleted(fact) });
}
