/**
 * Archives as zip files (yazl) written streaming into the ADMIN_EXPORTS bucket: the zip's
 * output is pulled by the object store's put chunk by chunk (a chunk is published and
 * acknowledged before the next is read), and an entry's content is pulled by the zip as it
 * writes, so neither side buffers more than a chunk or two. Entries whose size is unknown
 * use data descriptors, and ZIP64 where sizes need it (yazl).
 */
import { Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import type { ObjectStore } from '@mailroom/messaging';
import type { ArchiveWriter, Archives } from '../domain/export-ports';

class ZipArchive implements ArchiveWriter {
  private readonly zip = new ZipFile();
  private readonly output: Transform;
  private readonly stored: Promise<number>;
  private count = 0;
  /** The entry being written, cut short on abort (a file's object-store read is then cancelled). */
  private current: Readable | undefined;

  constructor(
    bucket: ObjectStore,
    name: string,
    private readonly mtime: Date,
  ) {
    this.output = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        this.count += chunk.length;
        done(null, chunk);
      },
    });
    this.zip.on('error', (err: Error) => this.output.destroy(err));
    const zipOut = this.zip.outputStream as Readable;
    zipOut.on('error', (err: Error) => this.output.destroy(err));
    zipOut.pipe(this.output);
    this.stored = bucket.put({ name, description: 'organization export (zip)' }, Readable.toWeb(this.output) as ReadableStream<Uint8Array>).then((info) => info.size);
    // Observed by add() and finish(); a failure before either is asked for is not unhandled.
    this.stored.catch(() => {});
  }

  get bytes(): number {
    return this.count;
  }

  async add(path: string, content: AsyncIterable<Uint8Array>): Promise<void> {
    const input = Readable.from(content, { objectMode: false });
    this.current = input;
    this.zip.addReadStream(input, path, { mtime: this.mtime });
    const storeEnded = this.stored.then(() => {
      throw new Error('the archive was stored before all its entries were written');
    });
    await Promise.race([finished(input), storeEnded]);
  }

  async finish(): Promise<number> {
    this.zip.end();
    return this.stored;
  }

  abort(reason: Error): void {
    this.current?.destroy();
    this.output.destroy(reason);
  }
}

export function zipArchives(bucket: ObjectStore): Archives {
  return {
    create: (name, mtime) => new ZipArchive(bucket, name, mtime),
    delete: async (name) => {
      await bucket.delete(name);
    },
  };
}
