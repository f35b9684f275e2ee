/**
 * Following the deletion of environments (`internal.orgs.environment.deleted` on
 * ORGS_FACTS), for the services that own what an environment holds (auth: API keys,
 * mailbox: inboxes, webhooks: endpoints). Each reads the fact with its own durable consumer
 * and removes what it holds there, in one transaction of its own schema that also records
 * the environment as deleted, so its creations refuse it from then on.
 *
 * A fact is believed only once orgs no longer knows the environment: every reader of the fact
 * holds its seal key, so any one of them, compromised, could have a forged one stored
 * (decisions.md, "Sealed stored messages"), and the others would destroy a live
 * environment's keys, inboxes and endpoints. Environment ids are never reused: orgs' "not
 * found" is final.
 */
import { AppError, newId, type ConsumerName, type Fact, type RpcService } from '@mailroom/contracts';
import { RpcClient, runConsumer, type Bus, type Outcome, type RunningConsumer } from '@mailroom/messaging';

export type EnvironmentDeleted = Fact<'internal.orgs.environment.deleted'>;

/** What a service did with a deletion: how many of its resources it removed (0 when the fact came again). */
export interface EnvironmentRemoval {
  removed: number;
}

export interface EnvironmentDeletionSteps {
  /** Whether orgs still has the environment. */
  exists(fact: EnvironmentDeleted): Promise<boolean>;
  /** Records the environment as deleted and removes what it holds; idempotent. */
  remove(fact: EnvironmentDeleted): Promise<EnvironmentRemoval>;
}

/**
 * One fact: removed once orgs confirms the environment is gone; terminated when orgs still
 * has it (forged, or a bug: retrying would not change the answer). A failure of either step
 * throws, and the consumer retries it later.
 */
export async function applyEnvironmentDeletion(fact: EnvironmentDeleted, steps: EnvironmentDeletionSteps): Promise<{ outcome: Outcome; removed?: number }> {
  if (await steps.exists(fact)) return { outcome: { term: 'the environment still exists: not a deletion orgs made' } };
  const { removed } = await steps.remove(fact);
  return { outcome: 'ack', removed };
}

/** Whether orgs has the environment, from `ask` (orgs.environment.get): its answer, or not_found. */
export function environmentLookup(ask: (req: { org_id: string; env_id: string }) => Promise<unknown>): (fact: EnvironmentDeleted) => Promise<boolean> {
  return async (fact) => {
    try {
      await ask({ org_id: fact.org_id, env_id: fact.env_id });
      return true;
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return false;
      throw err;
    }
  };
}

export interface FollowEnvironmentDeletions {
  /** The service that owns the resources; it asks orgs as itself. */
  service: RpcService;
  durable: ConsumerName;
  remove: EnvironmentDeletionSteps['remove'];
}

export function followEnvironmentDeletions(bus: Bus, opts: FollowEnvironmentDeletions): Promise<RunningConsumer> {
  const rpc = new RpcClient(bus);
  const exists = environmentLookup((req) => rpc.asService(opts.service, 'orgs.environment.get', req, { requestId: newId('request') }));
  return runConsumer(bus, {
    subject: 'internal.orgs.environment.deleted',
    durable: opts.durable,
    // Deletions are rare, and each holds off its service's creations for its transaction: one at a time.
    concurrency: 1,
    handler: async (fact, meta) => {
      const { outcome, removed } = await applyEnvironmentDeletion(fact, { exists, remove: opts.remove });
      if (outcome === 'ack') meta.log.info({ org_id: fact.org_id, env_id: fact.env_id, removed }, 'environment deleted: its resources here removed');
      else meta.log.error({ org_id: fact.org_id, env_id: fact.env_id }, 'environment deletion refused: orgs still has the environment');
      return outcome;
    },
  });
}
