/**
 * The signatures of a delivery, both from the endpoint's one `whsec_` secret:
 * - the spec's (section 6): `x-service-signature`, lowercase hex HMAC-SHA256 keyed with the
 *   secret string as given at creation (UTF-8), over the Unix timestamp in seconds, a period,
 *   then the raw body; with `x-service-timestamp`.
 * - Standard Webhooks (what Svix and others implement, so receivers can verify with the
 *   libraries they already have): `webhook-signature: v1,<base64 HMAC-SHA256>` keyed with
 *   the bytes the secret encodes after `whsec_` (base64), over `id.timestamp.body`; with
 *   `webhook-id` (the envelope id) and `webhook-timestamp`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` + 32 random bytes (256 bits) in standard base64, as the Standard Webhooks
 * libraries decode it. (Secrets made before were base64url: Node reads both alphabets, so
 * they still sign; a library that reads only standard base64 needs `-` -> `+`, `_` -> `/`
 * and `=` padding, which are the same key bytes.)
 */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The spec's `x-service-signature`. */
export function sign(secret: string, timestampSeconds: number, body: Buffer): string {
  // A string key is taken as UTF-8, and is several times cheaper than a Buffer (no KeyObject per call).
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(body).digest('hex');
}

/** The key of the Standard Webhooks signature: the bytes the secret encodes after its prefix. */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** The Standard Webhooks `webhook-signature` value: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signStandard(key: Buffer, id: string, timestampSeconds: number, body: Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.`, 'utf8').update(body).digest('base64')}`;
}

/** Every signature header of one attempt (JSON body, sent at `timestampSeconds`). */
export function deliveryHeaders(secret: { text: string; key: Buffer }, eventId: string, timestampSeconds: number, body: Buffer): Record<string, string> {
  const timestamp = String(timestampSeconds);
  return {
    'content-type': 'application/json',
    'x-service-timestamp': timestamp,
    'x-service-signature': sign(secret.text, timestampSeconds, body),
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signStandard(secret.key, eventId, timestampSeconds, body),
  };
}
