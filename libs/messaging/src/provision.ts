/**
 * Provisioning the bus, like migrating a database: every stream, object bucket and KV
 * bucket of the catalog created, or updated to the catalog's settings. Run by the migrate
 * step with the `migrate` identity, the only one allowed to; services at run time open what
 * exists and may not create, change or delete any of it.
 */
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { StorageType } from '@nats-io/jetstream';
import { KV_BUCKETS, OBJECT_BUCKETS, STREAMS, type StreamName } from '@mailroom/contracts';
import type { Bus } from './bus';
import { bucketOptions, type BucketName } from './objects';
import { ensureStreams } from './streams';

export async function provisionBus(bus: Bus): Promise<string[]> {
  await ensureStreams(bus, Object.keys(STREAMS) as StreamName[]);
  const objm = new Objm(bus.js);
  for (const bucket of Object.keys(OBJECT_BUCKETS) as BucketName[]) {
    await objm.create(bus.ns.stream(OBJECT_BUCKETS[bucket]), bucketOptions(bucket));
  }
  const kvm = new Kvm(bus.js);
  for (const kv of Object.values(KV_BUCKETS)) {
    await kvm.create(bus.ns.stream(kv.name), { ttl: kv.ttlSeconds * 1000, history: kv.history, storage: StorageType.File });
  }
  return [...Object.keys(STREAMS), ...Object.values(OBJECT_BUCKETS), ...Object.values(KV_BUCKETS).map((k) => k.name)];
}
