/**
 * Streams made, or updated to the catalog's settings, by the migrate step (provision.ts): services at run time may not.
 * Replicas come from configuration (NATS_STREAM_REPLICAS: 1 on one node, 3 on a 3-node cluster);
 * an existing stream is updated to the count, which NATS does by adding or removing peers.
 */
import { RetentionPolicy, StorageType, DiscardPolicy, JetStreamApiError, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { STREAMS, type StreamName } from '@mailroom/contracts';
import type { Bus } from './bus';

const RETENTION = {
  limits: RetentionPolicy.Limits,
  workqueue: RetentionPolicy.Workqueue,
  interest: RetentionPolicy.Interest,
} as const;

/** How the streams and buckets are replicated across the NATS cluster's JetStream servers. */
export interface Replication {
  /** Copies of each stream and bucket: 1, 3 or 5 (a quorum is a majority; an even count adds no fault tolerance). */
  replicas: number;
}

export const SINGLE_NODE: Replication = { replicas: 1 };

export function streamConfig(bus: Bus, name: StreamName, replication: Replication = SINGLE_NODE): Partial<StreamConfig> & { name: string } {
  const spec = STREAMS[name];
  return {
    name: bus.ns.stream(name),
    subjects: spec.subjects.map((s) => bus.ns.subject(s)),
    retention: RETENTION[spec.retention],
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(spec.maxAgeSeconds * 1000),
    duplicate_window: nanos(spec.duplicateWindowSeconds * 1000),
    description: spec.description,
    num_replicas: replication.replicas,
  };
}

const NOT_FOUND = 10059;
const ALREADY_IN_USE = 10058;
/**
 * The server cannot place the replicas: "no suitable peers for placement" (a cluster of fewer
 * servers than replicas, at creation and update alike: nats-server 2.9 on three nodes asked
 * for 5), "insufficient resources", and "replicas > 1 not supported in non-clustered mode"
 * (one server, at creation only).
 */
export const CANNOT_PLACE = new Set([10005, 10023, 10074]);

/** A refusal of the server to place the replicas, said in terms of the setting that asked for them; any other error as it is. */
export function replicaError(stream: string, replicas: number, err: unknown): unknown {
  if (!(err instanceof JetStreamApiError && CANNOT_PLACE.has(err.code))) return err;
  return new Error(
    `stream ${stream} cannot have ${replicas} replica(s) (${err.message}): NATS_STREAM_REPLICAS must not exceed the JetStream servers of the cluster (1 for one server)`,
    { cause: err },
  );
}

export async function ensureStreams(bus: Bus, names: readonly StreamName[], replication: Replication = SINGLE_NODE): Promise<void> {
  for (const name of names) {
    const config = streamConfig(bus, name, replication);
    await putStream(bus, config).catch((err: unknown) => {
      throw replicaError(config.name, replication.replicas, err);
    });
  }
}

async function putStream(bus: Bus, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await bus.jsm.streams.info(config.name);
    await bus.jsm.streams.update(config.name, config);
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== NOT_FOUND) throw err;
    try {
      await bus.jsm.streams.add(config);
    } catch (addErr) {
      // Another instance created it in between: make sure it has our settings.
      if (addErr instanceof JetStreamApiError && addErr.code === ALREADY_IN_USE) {
        await bus.jsm.streams.update(config.name, config);
      } else {
        throw addErr;
      }
    }
  }
}

/**
 * A bucket's stream (KV_<name>, OBJ_<name>, as NATS names them) updated to the replica count:
 * creating a bucket that exists does not change it.
 */
export async function ensureBucketReplicas(bus: Bus, stream: string, replication: Replication): Promise<void> {
  const info = await bus.jsm.streams.info(stream);
  if (info.config.num_replicas === replication.replicas) return;
  await bus.jsm.streams.update(stream, { ...info.config, num_replicas: replication.replicas }).catch((err: unknown) => {
    throw replicaError(stream, replication.replicas, err);
  });
}

/** Deletes every stream of this namespace: for tests, which own their namespace. */
export async function deleteNamespaceStreams(bus: Bus): Promise<string[]> {
  if (!bus.ns.prefix) throw new Error('refusing to delete streams of the empty namespace');
  const deleted: string[] = [];
  for await (const name of bus.jsm.streams.names()) {
    if (name.replace(/^(KV|OBJ)_/, '').startsWith(`${bus.ns.prefix}_`)) {
      await bus.jsm.streams.delete(name);
      deleted.push(name);
    }
  }
  return deleted;
}
