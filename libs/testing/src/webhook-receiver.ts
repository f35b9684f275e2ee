/**
 * A webhook receiver for tests, on loopback. It verifies each delivery the way a customer
 * would, with its own code (not the service's): HMAC-SHA256 over `timestamp.body` with
 * each known secret, compared in constant time, and a timestamp within 5 minutes of its
 * own clock. What it answers is programmable per request.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const SIGNATURE_WINDOW_SECONDS = 300;

export interface ReceivedDelivery {
  /** 1-based arrival number. */
  n: number;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  timestamp: string | undefined;
  signature: string | undefined;
  /** The secret the signature verifies with, if any (and the timestamp is in the window). */
  verifiedWith: string | undefined;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (until the receiver closes). */
  hang?: boolean;
  /** Answer after this many ms. */
  delayMs?: number;
}

export interface ReceiverOptions {
  secrets?: string[];
  /** The receiver's clock in ms (tests that move time give theirs). */
  now?: () => number;
  /** Default: 200 when the signature verifies, 401 otherwise. */
  reply?: (d: ReceivedDelivery) => Reply;
}

export function verifySignature(secret: string, timestamp: string | undefined, signature: string | undefined, raw: Buffer, nowMs: number): boolean {
  if (!timestamp || !signature || !/^\d+$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  connections = 0;
  /** Requests received and not yet answered (hanging ones included). */
  answering = 0;
  secrets: string[];
  reply: (d: ReceivedDelivery) => Reply;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly opts: ReceiverOptions,
  ) {
    this.secrets = opts.secrets ?? [];
    this.reply = opts.reply ?? ((d) => ({ status: d.verifiedWith ? 200 : 401 }));
  }

  static async start(opts: ReceiverOptions = {}, host = '127.0.0.1'): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port, opts);
    server.on('connection', (s: Socket) => {
      receiver.connections++;
      receiver.sockets.add(s);
      s.on('close', () => receiver.sockets.delete(s));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => receiver.handle(req.url ?? '/', req.headers, Buffer.concat(chunks), res));
    });
    return receiver;
  }

  url(path = '/hook', host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  private handle(path: string, headers: IncomingHttpHeaders, raw: Buffer, res: ServerResponse): void {
    const timestamp = typeof headers['x-service-timestamp'] === 'string' ? headers['x-service-timestamp'] : undefined;
    const signature = typeof headers['x-service-signature'] === 'string' ? headers['x-service-signature'] : undefined;
    const now = this.opts.now?.() ?? Date.now();
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const d: ReceivedDelivery = {
      n: this.received.length + 1,
      path,
      headers,
      raw,
      body,
      timestamp,
      signature,
      verifiedWith: this.secrets.find((s) => verifySignature(s, timestamp, signature, raw, now)),
      at: Date.now(),
    };
    this.received.push(d);
    this.answering++;
    const reply = this.reply(d);
    if (reply.hang) {
      this.hanging.add(res);
      return;
    }
    const send = () => {
      this.answering--;
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
      res.end(reply.body ?? '');
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  }

  /** Deliveries of one event, in arrival order. */
  of(eventId: string): ReceivedDelivery[] {
    return this.received.filter((d) => d.body?.id === eventId);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
