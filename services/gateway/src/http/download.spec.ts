import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@mailroom/contracts';
import { contentDisposition, contentType, sendDownload, type ObjectReader } from './download';
import { sendError } from './errors';

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition(null)).toBe('attachment');
    expect(contentDisposition('résumé "final".pdf')).toBe(`attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`);
  });

  it('survives a stored name with an unpaired surrogate', () => {
    expect(contentDisposition('a\ud800.txt')).toBe(`attachment; filename="a_.txt"; filename*=UTF-8''a%EF%BF%BD.txt`);
  });
});

describe('contentType', () => {
  it('keeps a media type, and sends anything a header cannot carry as bytes', () => {
    expect(contentType('application/pdf')).toBe('application/pdf');
    expect(contentType('text/plain; charset="utf-8"')).toBe('text/plain; charset="utf-8"');
    expect(contentType('text/plain\r\nX-Injected: 1')).toBe('application/octet-stream');
    expect(contentType('image/pngé')).toBe('application/octet-stream');
    expect(contentType('nonsense')).toBe('application/octet-stream');
  });
});

describe('sendDownload with a store that stalls', () => {
  const bytes = new TextEncoder().encode('From: a@example.com\r\n\r\nhello\r\n');
  const stall = () => new Promise<never>(() => {});
  const readers: Record<string, ObjectReader['get']> = {
    whole: async () => ({ info: { size: bytes.length }, data: new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) }) }),
    // The store never starts the object.
    never: stall,
    // It sends the first chunk, then nothing.
    stalls: async () => ({ info: { size: bytes.length * 2 }, data: new ReadableStream({ start: (c) => c.enqueue(bytes), pull: stall }) }),
  };
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.get('/:case', (req, res, next) => {
      const reader: ObjectReader = { get: readers[req.params.case]! };
      const buckets = { raw: reader, received: reader, sent: reader, attachments: reader, exports: reader };
      sendDownload(res, buckets, { bucket: 'raw', object: 'o', content_type: 'message/rfc822', filename: null, size: 0 }, { startMs: 200, idleMs: 200 }).catch(next);
    });
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      if (err instanceof AppError) sendError(res, err, 'req_test');
      else res.destroy();
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the stored bytes whole', async () => {
    const res = await fetch(`${base}/whole`);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it('answers 503 in the error shape when the store does not start the object', async () => {
    const res = await fetch(`${base}/never`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'service_unavailable', request_id: 'req_test' } });
  });

  it('cuts the response when the store stops sending, short of its Content-Length', async () => {
    const res = await fetch(`${base}/stalls`);
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
  });
});
