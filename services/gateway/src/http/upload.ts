/**
 * Receives an upload (POST /api/v1/attachments) and streams it into the uploads bucket as it
 * arrives: the gateway holds a chunk at a time, never the file. Two forms: multipart/form-data
 * with one file part (its filename and Content-Type), or the raw bytes with their own
 * Content-Type and `?filename=`. More than `maxBytes` is a 413 naming the limit: at once when
 * Content-Length says so, else when the count passes it (the partial object is deleted).
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import { AppError, attachmentContentType, attachmentFilename, newId } from '@mailroom/contracts';

/** What an upload writes to the uploads bucket (@nats-io/obj's ObjectStore has it). */
export interface ObjectWriter {
  put(meta: { name: string }, data: ReadableStream<Uint8Array>): Promise<unknown>;
  delete(name: string): Promise<unknown>;
}

export interface ReceivedUpload {
  object: string;
  filename: string;
  content_type: string;
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `the file is larger than ${maxBytes} bytes, the most a message can carry (SEND_MAX_MESSAGE_BYTES)`);
}

function invalid(path: string, message: string): AppError {
  return new AppError('invalid_request', `upload is invalid: ${message}`, { details: [{ path, message }] });
}

/** A file name and content type as the send API takes them (no path, no line breaks, type/subtype). */
function checked(filename: string | undefined, contentType: string | undefined, where: { filename: string; contentType: string }): { filename: string; content_type: string } {
  if (!filename) throw invalid(where.filename, 'a file name is required');
  const name = attachmentFilename.safeParse(filename);
  if (!name.success) throw invalid(where.filename, name.error.issues[0]!.message);
  const type = attachmentContentType.safeParse((contentType ?? '').split(';')[0]!.trim());
  if (!type.success) throw invalid(where.contentType, type.error.issues[0]!.message);
  return { filename: name.data, content_type: type.data };
}

/** Passes bytes on, and fails once more than `max` went through. */
class Counter extends Transform {
  private count = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.max) done(tooLarge(this.max));
    else done(null, chunk);
  }
}

/** Streams `source` into the bucket under a new attachment id; the partial object is deleted on failure. */
export async function store(bucket: ObjectWriter, source: Readable, maxBytes: number): Promise<string> {
  const object = newId('attachment');
  const counted = source.pipe(new Counter(maxBytes));
  // An error of the source (a client gone) reaches the store through the counter.
  source.once('error', (err) => counted.destroy(err));
  try {
    await bucket.put({ name: object }, Readable.toWeb(counted) as ReadableStream<Uint8Array>);
  } catch (err) {
    await bucket.delete(object).catch(() => undefined);
    // The counter's 413 may come wrapped by the store; say it plainly.
    if (counted.errored instanceof AppError) throw counted.errored;
    throw err instanceof AppError ? err : new AppError('invalid_request', 'the upload did not arrive whole; send it again', { cause: err });
  }
  if (counted.errored instanceof AppError) {
    await bucket.delete(object).catch(() => undefined);
    throw counted.errored;
  }
  return object;
}

function rawUpload(req: Request, bucket: ObjectWriter, maxBytes: number): Promise<ReceivedUpload> {
  const type = req.headers['content-type'];
  if (!type) throw new AppError('unsupported_media_type', 'POST /api/v1/attachments takes multipart/form-data with one file, or the file itself with its Content-Type and ?filename=');
  const filename = typeof req.query.filename === 'string' ? req.query.filename : undefined;
  const meta = checked(filename, type, { filename: 'query.filename', contentType: 'header.content-type' });
  return store(bucket, req, maxBytes).then((object) => ({ object, ...meta }));
}

function multipartUpload(req: Request, bucket: ObjectWriter, maxBytes: number): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // One file; a few small fields are read and ignored (clients add them).
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, fieldSize: 1024, parts: 21, fileSize: maxBytes } });
    } catch (err) {
      reject(new AppError('invalid_request', `upload is invalid: ${err instanceof Error ? err.message : 'not multipart/form-data'}`));
      return;
    }
    let storing: Promise<ReceivedUpload> | undefined;
    let failed: AppError | undefined;
    // Answered at once; the rest of the body is read and dropped.
    const fail = (err: AppError) => {
      if (failed) return;
      failed = err;
      // A file stored before the request failed (a second file came) is not kept.
      void storing?.then((r) => bucket.delete(r.object)).catch(() => undefined);
      req.unpipe(parser);
      req.resume();
      reject(err);
    };
    parser.on('file', (_field, stream, info) => {
      if (storing || failed) {
        stream.resume();
        return;
      }
      let meta: { filename: string; content_type: string };
      try {
        meta = checked(info.filename, info.mimeType, { filename: 'body.file.filename', contentType: 'body.file.content-type' });
      } catch (err) {
        stream.resume();
        fail(err as AppError);
        return;
      }
      // busboy cuts the file at fileSize and says so: one more byte than allowed is the 413.
      stream.once('limit', () => stream.destroy(tooLarge(maxBytes)));
      storing = store(bucket, stream, maxBytes).then((object) => ({ object, ...meta }));
      storing.catch((err: unknown) => fail(err instanceof AppError ? err : new AppError('invalid_request', 'the upload did not arrive whole; send it again', { cause: err })));
    });
    parser.on('filesLimit', () => fail(invalid('body', 'send one file per request')));
    parser.on('error', (err: Error) => fail(new AppError('invalid_request', `upload is invalid: ${err.message}`)));
    parser.on('close', () => {
      if (failed) return;
      if (!storing) return fail(invalid('body', 'a file part (with a filename) is required'));
      storing.then(resolve, () => undefined);
    });
    req.pipe(parser);
  });
}

/**
 * The upload, stored; a 4xx in the error shape for what cannot be one. On failure the rest of
 * the body is read and dropped, so the client, still sending, gets the answer.
 */
export async function receiveUpload(req: Request, bucket: ObjectWriter, maxBytes: number): Promise<ReceivedUpload> {
  try {
    const length = Number(req.headers['content-length']);
    if (Number.isFinite(length) && length > maxBytes + (req.is('multipart/form-data') ? 64 * 1024 : 0)) throw tooLarge(maxBytes);
    if (req.is('multipart/form-data')) return await multipartUpload(req, bucket, maxBytes);
    if (req.is('multipart/*') || req.is('application/x-www-form-urlencoded')) {
      throw new AppError('unsupported_media_type', 'POST /api/v1/attachments takes multipart/form-data with one file, or the file itself with its Content-Type and ?filename=');
    }
    return await rawUpload(req, bucket, maxBytes);
  } catch (err) {
    req.unpipe();
    req.resume();
    throw err;
  }
}
