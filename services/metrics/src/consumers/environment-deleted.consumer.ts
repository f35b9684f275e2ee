/** Consumer of `internal.orgs.environment.deleted`: the environment's rollups are deleted, and its events are not counted afterwards. */
import type { Bus, RunningConsumer } from '@mailroom/messaging';
import { followEnvironmentDeletions } from '@mailroom/runtime';
import type { Rollups } from '../domain/rollups';

export function startEnvironmentDeletedConsumer(bus: Bus, rollups: Pick<Rollups, 'environmentDeleted'>): Promise<RunningConsumer> {
  return followEnvironmentDeletions(bus, { service: 'metrics', durable: 'metrics--environment-deleted', remove: (fact) => rollups.environmentDeleted(fact) });
}
