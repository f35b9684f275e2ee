/**
 * Streams a stored object (raw message, attachment) that a service authorised: the
 * gateway never buffers it. Content is sent as a download with nosniff and a CSP that
 * forbids everything, so an HTML attachment cannot run in the API's origin.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { AppError, type download as downloadSchema } from '@mailroom/contracts';
import type { BucketName, ObjectStore } from '@mailroom/messaging';
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

export async function sendDownload(res: Response, buckets: Record<Exclude<BucketName, 'replies'>, ObjectStore>, d: Download): Promise<void> {
  let object;
  try {
    object = await buckets[d.bucket].get(d.object);
  } catch (err) {
    throw new AppError('service_unavailable', 'stored content is unavailable right now; retry shortly', { cause: err });
  }
  if (!object) throw new AppError('internal_error', 'stored content is missing');
  res.status(200);
  res.setHeader('Content-Type', contentType(d.content_type));
  res.setHeader('Content-Length', String(object.info.size));
  res.setHeader('Content-Disposition', contentDisposition(d.filename));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  await pipeline(Readable.fromWeb(object.data as import('node:stream/web').ReadableStream<Uint8Array>), res);
}
