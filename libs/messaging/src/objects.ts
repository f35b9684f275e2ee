/**
 * Object buckets (JetStream object store) for message bytes: raw messages and decoded
 * attachments, which are too large for a NATS message. Bucket names come from the
 * contracts' catalog and the namespace. Objects are chunked and checksummed by NATS;
 * everything goes through @nats-io/obj's public API (put, get, delete, info).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
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
// Uploads: referable for 24 hours (mailbox's clock); the bucket drops what is left an hour later.
const BUCKET_TTL_MS: Partial<Record<BucketName, number>> = { replies: 10 * 60_000, exports: 8 * 86_400_000, uploads: 25 * 3_600_000 };

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

/** Chunks read ahead of the reader: memory per read is bounded by this, whatever the object's size. */
const READ_AHEAD_CHUNKS = 4;

/**
 * An object's bytes as a Node stream that reads ahead at most READ_AHEAD_CHUNKS chunks (128 KiB
 * each) of what its reader has taken. @nats-io/obj's own get() queues every chunk the server
 * pushes, so a slow reader (a remote SMTP server) would hold the whole object in memory. The
 * chunks are read with an ordered pull consumer on the object's chunk subject, as the object
 * store protocol (ADR-20) lays them out, and checked against the stored size and SHA-256.
 * Null when the object does not exist.
 */
export async function readObject(bus: Bus, store: ObjectStore, bucket: BucketName, name: string): Promise<{ size: number; data: Readable } | null> {
  const info = await store.info(name);
  if (!info || info.deleted) return null;
  const stream = `OBJ_${bus.ns.stream(OBJECT_BUCKETS[bucket])}`;
  const subject = `$O.${bus.ns.stream(OBJECT_BUCKETS[bucket])}.C.${info.nuid}`;
  const expected = info.digest.startsWith('SHA-256=') ? Buffer.from(info.digest.slice(8), 'base64url').toString('hex') : null;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (info!.size === 0) return;
    // One subject as a string: filter_subject, which NATS servers before 2.10 take too.
    const consumer = await bus.js.consumers.get(stream, { filter_subjects: subject });
    const messages = await consumer.consume({ max_messages: READ_AHEAD_CHUNKS });
    const sha = createHash('sha256');
    let read = 0;
    try {
      for await (const m of messages) {
        sha.update(m.data);
        read += m.data.length;
        yield m.data;
        if (m.info.pending === 0 || read >= info!.size) break;
      }
    } finally {
      await messages.close().catch(() => undefined);
    }
    if (read !== info!.size) throw new Error(`object ${name} of ${bucket}: read ${read} of ${info!.size} bytes`);
    if (expected && sha.digest('hex') !== expected) throw new Error(`object ${name} of ${bucket} is corrupt: its digest does not match`);
  }
  return { size: info.size, data: Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 }) };
}
