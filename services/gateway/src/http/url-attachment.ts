/**
 * Attachments given by URL (`{url, filename?, content_type?}` in a send, reply, reply-all or
 * forward): the gateway fetches each when the send is made, through the SSRF guard of outbound
 * HTTP (libs/platform guardedFetch: public addresses only unless the operator allows a range,
 * the address checked is the one connected to, redirects not followed, one deadline for the
 * whole fetch), streams the body into the uploads bucket as an upload is streamed (at most
 * SEND_MAX_MESSAGE_BYTES, counted as it comes), and mailbox registers it: the send then refers
 * to it by attachment_id, so the rest of the path (limits, copy, compose) is the upload's.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { AppError, attachmentContentType, attachmentFilename, attachmentUrl, type AttachmentUrl } from '@mailroom/contracts';
import { isBlocked, type GuardedFetch } from '@mailroom/platform';
import { store, type ObjectWriter, type ReceivedUpload } from './upload';

/** The name a file fetched from `url` gets when the send gives none: the URL's last path segment, if it is a file name. */
export function filenameOf(url: URL): string {
  const last = url.pathname.split('/').pop() ?? '';
  let decoded: string;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    return 'attachment';
  }
  const name = attachmentFilename.safeParse(decoded);
  return name.success ? name.data : 'attachment';
}

/** The content type the server answered with (without parameters), if it is one. */
export function contentTypeOf(header: string | null): string | undefined {
  const type = attachmentContentType.safeParse((header ?? '').split(';')[0]!.trim());
  return type.success ? type.data : undefined;
}

function unfetchable(where: string, url: string, why: string, cause?: unknown): AppError {
  return new AppError('unprocessable', `attachment ${where}: ${url} ${why}`, { details: [{ path: `${where}.url`, message: why }], ...(cause ? { cause } : {}) });
}

/** Fetches one file and stores it in the uploads bucket; 413 past maxBytes, 422 when it cannot be had. */
export async function fetchAttachment(fetch: GuardedFetch, bucket: ObjectWriter, maxBytes: number, timeoutMs: number, a: AttachmentUrl, where: string): Promise<ReceivedUpload> {
  const url = new URL(a.url);
  let res: Response;
  try {
    res = await fetch(url, { method: 'GET', headers: { accept: '*/*', 'user-agent': 'Mailroom attachment fetch' } });
  } catch (err) {
    if (isBlocked(err)) throw unfetchable(where, a.url, 'is not a public address', err);
    throw unfetchable(where, a.url, `could not be fetched within ${timeoutMs} ms`, err);
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw unfetchable(where, a.url, `answered ${res.status}, not 200 (redirects are not followed)`);
  }
  const length = Number(res.headers.get('content-length') ?? NaN);
  if ((Number.isFinite(length) && length > maxBytes) || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    if (!res.body) throw unfetchable(where, a.url, 'answered without a body');
    throw new AppError('payload_too_large', `attachment ${where}: ${a.url} is ${length} bytes, more than a message can carry (SEND_MAX_MESSAGE_BYTES, ${maxBytes} bytes)`);
  }
  const meta = { filename: a.filename ?? filenameOf(url), content_type: a.content_type ?? contentTypeOf(res.headers.get('content-type')) ?? 'application/octet-stream' };
  try {
    const object = await store(bucket, Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>), maxBytes);
    return { object, ...meta };
  } catch (err) {
    if (err instanceof AppError && err.code === 'payload_too_large') throw err;
    throw unfetchable(where, a.url, `did not arrive whole within ${timeoutMs} ms`, err);
  }
}

/**
 * The request with each `{url}` attachment fetched, stored and registered (`register` gives
 * its attachment_id), in order; the request itself when it has none. Fetched one at a time:
 * a send's files together are bounded by SEND_MAX_MESSAGE_BYTES anyway.
 */
export async function withUrlAttachments<T>(input: T, fetchOne: (a: AttachmentUrl, where: string) => Promise<{ attachment_id: string }>): Promise<T> {
  if (typeof input !== 'object' || input === null || !('attachments' in input) || !Array.isArray(input.attachments)) return input;
  const list: unknown[] = input.attachments;
  if (!list.some((a) => attachmentUrl.safeParse(a).success)) return input;
  const resolved: unknown[] = [];
  for (const [i, a] of list.entries()) {
    const byUrl = attachmentUrl.safeParse(a);
    resolved.push(byUrl.success ? { attachment_id: (await fetchOne(byUrl.data, `attachments.${i}`)).attachment_id } : a);
  }
  return Object.assign(Object.create(null) as object, input, { attachments: resolved });
}
