/**
 * Object buckets (JetStream object store) for message bytes: raw messages and decoded
 * attachments, which are too large for a NATS message. Bucket names come from the
 * contracts' catalog and the namespace. Objects are chunked and checksummed by NATS.
 */
import { createHash } from 'node:crypto';
import { Base64UrlPaddedCodec, Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import { JetStreamApiError, StorageType } from '@nats-io/jetstream';
import { headers, nanos, nuid } from '@nats-io/nats-core';
import { OBJECT_BUCKETS } from '@mailroom/contracts';
import type { Bus } from './bus';

// Every put and get hashes the object (SHA-256). The library's default is its pure-JS hash,
// made for browsers: on Node it costs about 160 us per 10 KB on the event loop; node:crypto's
// about 8 (measured here). Process-wide; set before any bucket is used.
setSha256Backend('native');

export type BucketName = keyof typeof OBJECT_BUCKETS;

/** The library's chunk size (128 KB), which is also the largest object putBytes writes itself. */
const MAX_CHUNK = 128 * 1024;
/** JetStream's answer when Nats-Expected-Last-Subject-Sequence does not hold. */
const WRONG_LAST_SEQUENCE = 10071;

export interface Bucket extends ObjectStore {
  /**
   * Stores `data` under `name`, readable by the library's get. A new name of at most one
   * chunk is written in two publishes (its chunk, then its metadata record on the condition
   * that the name has none yet); anything else goes through the library's put. The library's
   * put first looks the name up (one more round trip, answered "not found" with an error
   * built with its stack) and reads the bytes through a web stream: together about 100 us of
   * CPU per object between client and server, on every stored message (measured here).
   */
  putBytes(name: string, data: Uint8Array): Promise<void>;
}

/** How long an object of a bucket with a lifetime is kept: a large RPC reply is read within seconds. */
const BUCKET_TTL_MS: Partial<Record<BucketName, number>> = { replies: 10 * 60_000 };

/** Opens (creating on first use) a bucket of the catalog in this bus's namespace. */
export async function openBucket(bus: Bus, bucket: BucketName): Promise<Bucket> {
  const name = bus.ns.stream(OBJECT_BUCKETS[bucket]);
  const ttl = BUCKET_TTL_MS[bucket];
  const store = await new Objm(bus.js).create(name, { storage: StorageType.File, description: `mailroom ${bucket}`, ...(ttl ? { ttl: nanos(ttl) } : {}) });
  return Object.assign(store, { putBytes: (object: string, data: Uint8Array) => putBytes(bus, store, name, object, data) });
}

/**
 * The object store's layout (NATS ADR-20, the same in every client): chunks on
 * `$O.<bucket>.C.<nuid>`, and the object's metadata, the last message on
 * `$O.<bucket>.M.<base64url(name)>`, naming its chunks' nuid, size and SHA-256 digest.
 */
async function putBytes(bus: Bus, store: ObjectStore, bucket: string, name: string, data: Uint8Array): Promise<void> {
  if (name === '' || data.length > Math.min(MAX_CHUNK, bus.nc.info?.max_payload ?? 0)) {
    await store.putBlob({ name }, data);
    return;
  }
  const id = nuid.next();
  const chunkSubject = `$O.${bucket}.C.${id}`;
  if (data.length > 0) await bus.js.publish(chunkSubject, data);
  const info = {
    name,
    description: '',
    options: { max_chunk_size: MAX_CHUNK },
    bucket,
    nuid: id,
    size: data.length,
    chunks: data.length > 0 ? 1 : 0,
    mtime: new Date().toISOString(),
    digest: `SHA-256=${Base64UrlPaddedCodec.encode(createHash('sha256').update(data).digest())}`,
    deleted: false,
  };
  const h = headers();
  h.set('Nats-Rollup', 'sub');
  // 0: only if the name has no metadata yet, so no earlier version's chunks are left behind.
  h.set('Nats-Expected-Last-Subject-Sequence', '0');
  try {
    await bus.js.publish(`$O.${bucket}.M.${Base64UrlPaddedCodec.encode(name)}`, JSON.stringify(info), { headers: h });
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE)) throw err;
    // The name exists (a retried store): the library replaces it and removes the old chunks.
    if (data.length > 0) await bus.jsm.streams.purge(`OBJ_${bucket}`, { filter: chunkSubject });
    await store.putBlob({ name }, data);
  }
}

export type { ObjectStore };
