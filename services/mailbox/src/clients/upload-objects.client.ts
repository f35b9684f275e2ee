/**
 * The uploads bucket (MAIL_UPLOADS) as the domain sees it: what the store says of an object,
 * and the streamed copy of one into the attachments bucket (no file is held whole in memory).
 */
import { createHash } from 'node:crypto';
import { AppError } from '@mailroom/contracts';
import { Readable } from 'node:stream';
import { readObject, type Bus, type ObjectStore } from '@mailroom/messaging';
import type { UploadObjects } from '../domain/uploads';

export function uploadObjects(uploads: ObjectStore): UploadObjects {
  return {
    info: async (object) => {
      const info = await uploads.info(object);
      return info && !info.deleted ? { size: info.size, digest: info.digest } : null;
    },
  };
}

/**
 * Copies an upload into `target` under `name`, a few chunks at a time (readObject: the
 * store's digest and size are checked as it is read); the MD5 of its bytes, hex.
 */
export async function copyUpload(bus: Bus, uploads: ObjectStore, target: ObjectStore, upload: string, name: string): Promise<string> {
  const source = await readObject(bus, uploads, 'uploads', upload);
  if (!source) throw new AppError('expired', `attachment ${upload} is no longer stored; upload it again`);
  const md5 = createHash('md5');
  const hashed = (Readable.toWeb(source.data) as ReadableStream<Uint8Array>).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        md5.update(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  await target.put({ name }, hashed);
  return md5.digest('hex');
}
