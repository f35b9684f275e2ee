import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@mailroom/platform';
import { answerClientErrors, rawErrorResponse, refusalOf } from './client-error';

let server: Server;
let port: number;
let release: () => void = () => {};
let answerWaiting: () => void = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/slow') {
      // Headers go out at once, the body when the test says so.
      res.writeHead(200, { 'content-type': 'text/plain', 'x-request-id': 'req_slow' });
      res.write('started ');
      release = () => res.end('done');
      return;
    }
    if (req.url === '/wait') {
      // Nothing goes out until the test says so.
      answerWaiting = () => res.end('late');
      return;
    }
    res.setHeader('x-request-id', 'req_plain');
    res.end('ok');
  });
  answerClientErrors(server, createLogger({ service: 'test', level: 'silent' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Everything the server sends on one connection after `data`, until it closes. */
function exchange(data: string | Buffer, after?: (write: (more: string) => void) => void): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d) => {
      chunks.push(d);
      after?.((more) => socket.write(more));
      after = undefined;
    });
    const done = () => resolve(Buffer.concat(chunks).toString('latin1'));
    socket.on('error', done);
    socket.on('close', done);
    socket.write(data);
  });
}

describe('refusals of the HTTP parser', () => {
  it('maps parser errors to statuses and codes of the API', () => {
    expect(refusalOf({ code: 'HPE_HEADER_OVERFLOW' })).toMatchObject({ code: 'headers_too_large', status: 431 });
    expect(refusalOf({ code: 'ERR_HTTP_REQUEST_TIMEOUT' })).toMatchObject({ code: 'request_timeout', status: 408 });
    expect(refusalOf({ code: 'HPE_INVALID_METHOD' })).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(refusalOf({ code: 'HPE_SOMETHING_NEW', reason: 'Odd' })).toMatchObject({ code: 'invalid_request', message: 'the request is not valid HTTP/1.1 (Odd)' });
    expect(refusalOf({})).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('writes a whole response: status line, JSON length, request id, Connection: close', () => {
    const text = rawErrorResponse(refusalOf({ code: 'HPE_HEADER_OVERFLOW' }), 'req_1');
    const [head, body] = text.split('\r\n\r\n');
    expect(head!.split('\r\n')).toEqual([
      'HTTP/1.1 431 Request Header Fields Too Large',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body!)}`,
      'Cache-Control: no-store',
      'X-Request-Id: req_1',
      'Connection: close',
    ]);
    expect(JSON.parse(body!)).toEqual({ error: { code: 'headers_too_large', message: expect.stringContaining('16384 bytes'), request_id: 'req_1' } });
  });

  it('answers an oversized header once, though the client goes on sending', async () => {
    const text = await exchange(`GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(text).toContain('"code":"headers_too_large"');
  });

  it('answers a bad request after a finished one on the same connection', async () => {
    const text = await exchange('GET / HTTP/1.1\r\nHost: x\r\n\r\n', (write) => write('FROB / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 400 /);
    expect(text).toContain('"code":"invalid_request"');
  });

  it('only closes a connection whose response has begun: anything written would corrupt it', async () => {
    const text = await exchange('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', (write) => write('FROB / HTTP/1.1\r\nHost: x\r\n\r\n'));
    release();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).not.toContain('HTTP/1.1 400');
  });

  it('does not answer a bad request pipelined behind one still waiting for its answer', async () => {
    const text = exchange('GET /wait HTTP/1.1\r\nHost: x\r\n\r\nFROB / HTTP/1.1\r\nHost: x\r\n\r\n');
    // The refusal would have been read as the answer to the first request: the connection is closed instead.
    expect(await text).not.toContain('HTTP/1.1 400');
    answerWaiting();
  });

  it('answers a refused body of the request being read', async () => {
    const text = await exchange('POST /wait HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toContain('"code":"invalid_request"');
  });

  it('answers a request too slow to arrive with 408', async () => {
    const slow = createServer({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 }, (_req, res) => res.end('ok'));
    answerClientErrors(slow, createLogger({ service: 'test', level: 'silent' }));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const text = await new Promise<string>((resolve) => {
        const socket = connect((slow.address() as AddressInfo).port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (d) => chunks.push(d));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.write('GET / HTTP/1.1\r\nHost: x\r\n'); // and never the end of the headers
      });
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text).toContain('"code":"request_timeout"');
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });
});
