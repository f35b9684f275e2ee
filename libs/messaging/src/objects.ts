/**
 * Object buckets (JetStream object store) for message bytes: raw messages and decoded
 * attachments, which are too large for a NATS message. Bucket names come from the
 * contracts' catalog and the namespace. Objects are chunked and checksummed by NATS;
 * everything goes through @nats-io/obj's public API (put, get, delete, info).
 */
import { Objm, setSha256Backend, type ObjectStore, type ObjectStoreOptions } from '@nats-io/obj';
import { StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { OBJECT_BUCKETS } from '@mailroom/contracts';
import type { Bus } from './bus';

// Every put and get hashes the object (SHA-256). The library's default is its pure-JS hash,
// made for browsers: on Node it costs about 160 us per 10 KB on the event loop; node:crypto's
// about 8 (measured here). Process-wide; set before any bucket is used.
setSha256Backend('native');

export type BucketName = keyof typeof OBJECT_BUCKETS;

/** How long an object of a bucket with a lifetime is kept: a large RPC reply is read within seconds. */
// Exports: deleted by the admin service's purge 7 days after they finish; the bucket's own
// lifetime (8 days) also takes the chunks of an archive whose writer died mid-way.
const BUCKET_TTL_MS: Partial<Record<BucketName, number>> = { replies: 10 * 60_000, exports: 8 * 86_400_000 };

/** How a bucket is made (by the migrate step, provision.ts). */
export function bucketOptions(bucket: BucketName): Partial<ObjectStoreOptions> {
  const ttl = BUCKET_TTL_MS[bucket];
  return { storage: StorageType.File, description: `mailroom ${bucket}`, ...(ttl ? { ttl: nanos(ttl) } : {}) };
}

/** Opens a bucket of the catalog in this bus's namespace; the migrate step made it. */
export async function openBucket(bus: Bus, bucket: BucketName): Promise<ObjectStore> {
  const name = bus.ns.stream(OBJECT_BUCKETS[bucket]);
  return new Objm(bus.js).open(name).catch((err: unknown) => {
    throw new Error(`object bucket ${name} cannot be opened (${err instanceof Error ? err.message : String(err)}): has the migrate step provisioned the bus?`, { cause: err });
  });
}

export type { ObjectStore };
