/** Consumer of `internal.orgs.environment.deleted`: the environment's endpoints are deleted, and none is made there again. */
import type { Bus, RunningConsumer } from '@mailroom/messaging';
import { followEnvironmentDeletions } from '@mailroom/runtime';
import type { Endpoints } from '../domain/endpoints';

export function startEnvironmentDeletedConsumer(bus: Bus, endpoints: Endpoints): Promise<RunningConsumer> {
  return followEnvironmentDeletions(bus, { service: 'webhooks', durable: 'webhooks--environment-deleted', remove: (fact) => endpoints.environmentDeleted(fact) });
}
