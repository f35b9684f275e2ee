/**
 * Provisioning the bus, like migrating a database: every stream, object bucket and KV
 * bucket of the catalog created, or updated to the catalog's settings. Run by the migrate
 * step with the `migrate` identity, the only one allowed to; services at run time open what
 * exists and may not create, change or delete any of it. Each gets `replication.replicas`
 * copies (NATS_STREAM_REPLICAS), an existing one updated to that count.
 */
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { StorageType } from '@nats-io/jetstream';
import { KV_BUCKETS, OBJECT_BUCKETS, STREAMS, type StreamName } from '@mailroom/contracts';
import type { Bus } from './bus';
import { bucketOptions, type BucketName } from './objects';
import { SINGLE_NODE, ensureBucketReplicas, ensureStreams, replicaError, type Replication } from './streams';

export async function provisionBus(bus: Bus, replication: Replication = SINGLE_NODE): Promise<string[]> {
  await ensureStreams(bus, Object.keys(STREAMS) as StreamName[], replication);
  const { replicas } = replication;
  const objm = new Objm(bus.js);
  for (const bucket of Object.keys(OBJECT_BUCKETS) as BucketName[]) {
    const name = bus.ns.stream(OBJECT_BUCKETS[bucket]);
    await objm.create(name, { ...bucketOptions(bucket), replicas }).catch((err: unknown) => {
      throw replicaError(`OBJ_${name}`, replicas, err);
    });
    await ensureBucketReplicas(bus, `OBJ_${name}`, replication);
  }
  const kvm = new Kvm(bus.js);
  for (const kv of Object.values(KV_BUCKETS)) {
    const name = bus.ns.stream(kv.name);
    await kvm.create(name, { ttl: kv.ttlSeconds * 1000, history: kv.history, storage: StorageType.File, replicas }).catch((err: unknown) => {
      throw replicaError(`KV_${name}`, replicas, err);
    });
    await ensureBucketReplicas(bus, `KV_${name}`, replication);
  }
  return [...Object.keys(STREAMS), ...Object.values(OBJECT_BUCKETS), ...Object.values(KV_BUCKETS).map((k) => k.name)];
}
