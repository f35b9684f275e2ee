/** Consumer of `internal.orgs.environment.deleted`: the environment's API keys are revoked, and none is made there again. */
import type { Bus, RunningConsumer } from '@mailroom/messaging';
import { followEnvironmentDeletions } from '@mailroom/runtime';
import type { ApiKeys } from '../domain/api-keys';

export function startEnvironmentDeletedConsumer(bus: Bus, apiKeys: ApiKeys): Promise<RunningConsumer> {
  return followEnvironmentDeletions(bus, { service: 'auth', durable: 'auth--environment-deleted', remove: (fact) => apiKeys.environmentDeleted(fact) });
}
