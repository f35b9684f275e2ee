/**
 * Verifying a webhook delivery (spec section 6): `x-service-signature` is the lowercase hex
 * HMAC-SHA256, keyed with the endpoint's secret, of `x-service-timestamp + "." + raw body`;
 * a receiver compares in constant time and refuses a timestamp more than 5 minutes from its clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The envelope every delivery carries (the spec's, section 6). */
export interface WebhookEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  org_id: string;
  env_id: string;
  data: Data;
}

export interface VerifyOptions {
  /** How far the delivery's timestamp may be from now, in seconds (default 300; the spec suggests 600 when clocks differ). */
  toleranceSeconds?: number;
  /** The receiver's clock in milliseconds (default Date.now). */
  now?: () => number;
}

/** A delivery that does not verify: refuse it (answer 400 or 401), never act on its body. */
export class WebhookVerificationError extends Error {
  constructor(readonly reason: 'missing_headers' | 'bad_timestamp' | 'expired' | 'bad_signature' | 'bad_body') {
    super(`webhook delivery not verified: ${reason.replace('_', ' ')}`);
    this.name = 'WebhookVerificationError';
  }
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  const value = typeof headers.get === 'function' ? (headers as { get(name: string): string | null }).get(name) : (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks a delivery and answers its envelope. `rawBody` is the body exactly as received (a
 * Buffer or the string it decodes to), never re-serialized JSON; `headers` is Node's
 * (lower-case names) or a fetch Headers. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(rawBody: Buffer | Uint8Array | string, headers: Headers, secret: string, opts: VerifyOptions = {}): WebhookEvent {
  const timestamp = header(headers, 'x-service-timestamp');
  const signature = header(headers, 'x-service-signature');
  if (timestamp === undefined || signature === undefined) throw new WebhookVerificationError('missing_headers');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('bad_timestamp');
  const nowSeconds = (opts.now ?? Date.now)() / 1000;
  if (Math.abs(nowSeconds - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) throw new WebhookVerificationError('expired');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  const given = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  // The length is public (64 hex digits); the bytes are compared in constant time.
  if (given.length !== expected.length || !timingSafeEqual(expected, given)) throw new WebhookVerificationError('bad_signature');
  try {
    return JSON.parse(Buffer.from(body).toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('bad_body');
  }
}
