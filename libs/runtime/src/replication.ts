/**
 * NATS_STREAM_REPLICAS: the copies of every stream and bucket the migrate step makes or
 * updates (libs/messaging provision.ts). 1 for one NATS server (the default); 3 on a 3-node
 * cluster (deploy/k8s, the compose `cluster` profile), so a stream survives a node; 5 at
 * most (NATS's own bound). Even counts are refused: a quorum is a majority, so 2 tolerates no
 * more failures than 1 and 4 no more than 3, at the cost of another copy of every write.
 */
import { z } from 'zod';
import type { Replication } from '@mailroom/messaging';
import { envInt, parseConfig, type Env } from '@mailroom/platform';

export const replicationSchema = z.object({
  NATS_STREAM_REPLICAS: envInt(1, { min: 1, max: 5 }).refine((n) => n % 2 === 1, 'must be 1, 3 or 5 (an even count adds a copy of every write and no fault tolerance)'),
});

export function replicationOf(env: Env): Replication {
  return { replicas: parseConfig(replicationSchema, env).NATS_STREAM_REPLICAS };
}
