import { randomBytes } from 'node:crypto';
import yauzl from 'yauzl';
import type { ObjectStore } from '@mailroom/messaging';
import { zipArchives } from './zip-archive.client';

/** A bucket whose put reads the stream chunk by chunk, as the object store does, noting how much it has taken. */
function bucket(taken: { bytes: number }, stored: Map<string, Buffer>) {
  return {
    put: async (meta: { name: string }, rs: ReadableStream<Uint8Array>) => {
      const chunks: Buffer[] = [];
      for await (const c of rs) {
        chunks.push(Buffer.from(c));
        taken.bytes += c.length;
        await new Promise((r) => setImmediate(r)); // a publish and its acknowledgement
      }
      const all = Buffer.concat(chunks);
      stored.set(meta.name, all);
      return { size: all.length };
    },
    delete: async (name: string) => stored.delete(name),
  } as unknown as ObjectStore;
}

function entriesOf(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => {
      if (err || !z) return reject(err);
      const out = new Map<string, Buffer>();
      z.on('end', () => resolve(out));
      z.on('entry', (e: yauzl.Entry) =>
        z.openReadStream(e, (er, s) => {
          if (er || !s) return reject(er);
          const parts: Buffer[] = [];
          s.on('data', (c: Buffer) => parts.push(c));
          s.on('end', () => (out.set(e.fileName, Buffer.concat(parts)), z.readEntry()));
        }),
      );
      z.readEntry();
    });
  });
}

describe('zip archives in the object store', () => {
  it('store the entries as written, and answer the size stored', async () => {
    const stored = new Map<string, Buffer>();
    const archive = zipArchives(bucket({ bytes: 0 }, stored)).create('exp_1', new Date('2026-11-26T10:00:00.000Z'));
    async function* lines() {
      yield Buffer.from('{"a":1}\n');
      yield Buffer.from('{"a":2}\n');
    }
    async function* empty() {}
    await archive.add('orgs/members.ndjson', lines());
    await archive.add('orgs/invitations.ndjson', empty());
    const size = await archive.finish();
    expect(size).toBe(stored.get('exp_1')!.length);
    expect(archive.bytes).toBe(size);
    const entries = await entriesOf(stored.get('exp_1')!);
    expect(entries.get('orgs/members.ndjson')!.toString()).toBe('{"a":1}\n{"a":2}\n');
    expect(entries.get('orgs/invitations.ndjson')!.length).toBe(0);
  });

  it('read an entry only as fast as the store takes the archive (memory stays bounded)', async () => {
    const taken = { bytes: 0 };
    const stored = new Map<string, Buffer>();
    const archive = zipArchives(bucket(taken, stored)).create('exp_2', new Date());
    let produced = 0;
    let ahead = 0;
    async function* incompressible() {
      for (let i = 0; i < 400; i++) {
        const chunk = randomBytes(64 * 1024);
        produced += chunk.length;
        ahead = Math.max(ahead, produced - taken.bytes);
        yield chunk;
      }
    }
    await archive.add('big.bin', incompressible());
    await archive.finish();
    expect(produced).toBe(400 * 64 * 1024);
    // 25 MiB of incompressible bytes went through; never more than a few chunks waited for the store.
    expect(ahead).toBeLessThan(1024 * 1024);
  });

  it('store nothing once aborted', async () => {
    const stored = new Map<string, Buffer>();
    const archive = zipArchives(bucket({ bytes: 0 }, stored)).create('exp_3', new Date());
    async function* forever() {
      for (;;) {
        yield Buffer.alloc(1024);
        await new Promise((r) => setImmediate(r));
      }
    }
    const adding = archive.add('x.bin', forever());
    archive.abort(new Error('stopped'));
    await expect(Promise.race([adding, archive.finish()])).rejects.toThrow();
    expect(stored.has('exp_3')).toBe(false);
  });
});
