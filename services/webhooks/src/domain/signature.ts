/**
 * The delivery signature of the spec (section 6): lowercase hex HMAC-SHA256, key = the
 * endpoint secret string as given at creation (`whsec_...`, UTF-8), message = the Unix
 * timestamp in seconds, a period, then the raw body.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + 32 random bytes (256 bits) in base64url. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function sign(secret: string, timestampSeconds: number, body: Buffer): string {
  // A string key is taken as UTF-8, and is several times cheaper than a Buffer (no KeyObject per call).
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(body).digest('hex');
}
