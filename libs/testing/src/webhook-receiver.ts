/**
 * A webhook receiver for tests, on loopback. It verifies each delivery the way a customer
 * would, with its own code (not the service's): the spec's HMAC-SHA256 over `timestamp.body`
 * with each known secret, and the Standard Webhooks one over `id.timestamp.body`, each
 * compared in constant time, with a timestamp within 5 minutes of its own clock. By default
 * it answers 200 when both verify. What it answers is programmable per request.
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
  /** The secret the spec's signature verifies with, if any (and the timestamp is in the window). */
  verifiedWith: string | undefined;
  /** The secret the Standard Webhooks signature (webhook-id, -timestamp, -signature) verifies with, if any. */
  standardVerifiedWith: string | undefined;
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
  /** Default: 200 when both signatures verify with one secret, 401 otherwise. */
  reply?: (d: ReceivedDelivery) => Reply;
}

export function verifySignature(secret: string, timestamp: string | undefined, signature: string | undefined, raw: Buffer, nowMs: number): boolean {
  if (!timestamp || !signature || !/^\d+$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/**
 * Standard Webhooks: `webhook-signature` holds space-separated `v1,<base64>` entries; one must
 * be HMAC-SHA256 keyed with the base64 bytes after `whsec_`, over `id.timestamp.body`.
 */
export function verifyStandardSignature(secret: string, headers: IncomingHttpHeaders, raw: Buffer, nowMs: number): boolean {
  const [id, timestamp, signatures] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => headers[h]);
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string' || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(raw).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
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
    this.reply = opts.reply ?? ((d) => ({ status: d.verifiedWith && d.standardVerifiedWith === d.verifiedWith ? 200 : 401 }));
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
      standardVerifiedWith: this.secrets.find((s) => verifyStandardSignature(s, headers, raw, now)),
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
