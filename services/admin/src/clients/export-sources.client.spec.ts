import type { ObjectStore } from '@mailroom/messaging';
import { storedFiles } from './export-sources.client';

function bucketWith(stream: () => ReadableStream<Uint8Array>) {
  return { get: async (name: string) => (name === 'there' ? { info: { size: 1 }, data: stream() } : null) } as unknown as ObjectStore;
}

async function readAll(content: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const c of content) out += Buffer.from(c).toString();
  return out;
}

describe('stored files of an export', () => {
  it('stream an object, and answer null for one that is missing', async () => {
    const b = bucketWith(() => new ReadableStream({ start: (c) => (c.enqueue(Buffer.from('raw ')), c.enqueue(Buffer.from('bytes')), c.close()) }));
    const files = storedFiles({ raw: b, received: b, sent: b, attachments: b });
    expect(await readAll((await files.open({ path: 'messages/a/b.eml', bucket: 'raw', object: 'there' }))!)).toBe('raw bytes');
    expect(await files.open({ path: 'messages/a/c.eml', bucket: 'sent', object: 'gone' })).toBeNull();
  });

  it('fail a read the store stops sending, rather than wait for ever', async () => {
    let cancelled = false;
    const b = bucketWith(() => new ReadableStream({ start: (c) => void c.enqueue(Buffer.from('half')), cancel: () => void (cancelled = true) }));
    const files = storedFiles({ raw: b, received: b, sent: b, attachments: b }, 20);
    await expect(readAll((await files.open({ path: 'messages/a/b.eml', bucket: 'raw', object: 'there' }))!)).rejects.toThrow('messages/a/b.eml: the object store sent nothing for 20 ms');
    expect(cancelled).toBe(true);
  });
});
