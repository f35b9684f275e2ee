/**
 * Streams a stored object (raw message, attachment) that a service authorised: the
 * gateway never buffers it. Content is sent as a download with nosniff and a CSP that
 * forbids everything, so an HTML attachment cannot run in the API's origin.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { AppError, type download as downloadSchema } from '@mailroom/contracts';
import type { z } from 'zod';

export type Download = z.output<typeof downloadSchema>;

/**
 * RFC 6266 / 5987: an ASCII fallback and the UTF-8 name. A stored name can hold an unpaired
 * surrogate (mail decoded from UTF-16): it becomes U+FFFD, as encodeURIComponent throws on it.
 */
export function contentDisposition(filename: string | null): string {
  if (!filename) return 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename.toWellFormed())}`;
}

/** RFC 9110's media type (type/subtype and parameters, in header-safe characters); anything else is sent as bytes. */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9!#$&^_.+-]+=("[\x20-\x7e]*"|[a-z0-9!#$&^_.+-]+))*$/i;

/** A stored content type (from inbound mail, anything) as a header Node accepts. */
export function contentType(stored: string): string {
  return MEDIA_TYPE.test(stored) ? stored : 'application/octet-stream';
}

/**
 * How long the store may take to start an object once the owning service authorised it (its
 * RPC has had its own deadline already): a request waits at most both, then answers 503.
 */
export const DOWNLOAD_START_MS = 5_000;

/** How long a download waits for the store's next chunk before it cuts the response. */
export const DOWNLOAD_IDLE_MS = 10_000;

/** What a download reads from a bucket (@nats-io/obj's ObjectStore has it). */
export interface ObjectReader {
  get(name: string): Promise<{ info: { size: number }; data: ReadableStream<Uint8Array> } | null>;
}

/** How long the object store may take to start an object, and to send its next chunk. */
export interface DownloadDeadlines {
  startMs: number;
  idleMs: number;
}

/**
 * The stream's chunks, each of which must come within `idleMs` of being asked for. Only the
 * wait on the store is timed: pipeline asks for the next chunk when the client has taken the
 * last, so a slow client is never cut.
 */
async function* withIdleDeadline(stream: ReadableStream<Uint8Array>, idleMs: number): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const next = await withDeadline(reader.read(), idleMs, () => new Error(`stored content stalled: no data for ${idleMs} ms`));
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
}

/** `promise`, or the error of `late()` once `ms` have passed. */
async function withDeadline<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(late()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The object, or 503 when the store does not start it within the deadline (its stream is then cancelled). */
async function startRead(bucket: ObjectReader, name: string, startMs: number) {
  const unavailable = (cause?: unknown) => new AppError('service_unavailable', 'stored content is unavailable right now; retry shortly', { cause });
  const reading = bucket.get(name);
  try {
    return await withDeadline(reading, startMs, () => unavailable());
  } catch (err) {
    // Started after all: nobody will read it.
    void reading.then((o) => o?.data.cancel(), () => {});
    throw err instanceof AppError ? err : unavailable(err);
  }
}

/**
 * Sends the object. Before the headers, a store that does not answer within `startMs` is a
 * 503; after them, one that stops sending for `idleMs` cuts the response (the client sees
 * fewer bytes than Content-Length), so no request waits on a stalled read for ever.
 */
export async function sendDownload(res: Response, buckets: Record<Download['bucket'], ObjectReader>, d: Download, deadlines: DownloadDeadlines): Promise<void> {
  const object = await startRead(buckets[d.bucket], d.object, deadlines.startMs);
  if (!object) throw new AppError('internal_error', 'stored content is missing');
  res.status(200);
  res.setHeader('Content-Type', contentType(d.content_type));
  res.setHeader('Content-Length', String(object.info.size));
  res.setHeader('Content-Disposition', contentDisposition(d.filename));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  await pipeline(Readable.from(withIdleDeadline(object.data, deadlines.idleMs)), res).catch((err: unknown) => {
    // The client went away mid-download (a tool that read the headers only, a cancelled fetch): not a failure of ours.
    if (err instanceof Error && 'code' in err && err.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    throw err;
  });
}
