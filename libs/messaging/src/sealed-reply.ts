/**
 * A reply too large for one NATS message goes through the replies bucket, which every
 * service answering operations writes and the gateway reads: in the bucket it is encrypted
 * (AES-256-GCM) under a key made for that one reply, and the key travels in the reply's
 * header, on the caller's inbox, which only the caller may read. Another service reading
 * the bucket learns nothing, and one that overwrites the object is caught by the tag.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const KEY = 32;
const IV = 12;
const TAG = 16;

/** The object's bytes and the header value (key, IV and tag, base64url) that opens them. */
export function sealReply(data: Uint8Array): { sealed: Buffer; key: string } {
  const key = randomBytes(KEY);
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(data), cipher.final()]);
  return { sealed, key: Buffer.concat([key, iv, cipher.getAuthTag()]).toString('base64url') };
}

/** The reply's bytes; throws when the header is not a key or the object is not what was sealed. */
export function openReply(sealed: Uint8Array, header: string): Buffer {
  const material = Buffer.from(header, 'base64url');
  if (material.length !== KEY + IV + TAG) throw new Error('the reply key is malformed');
  const decipher = createDecipheriv('aes-256-gcm', material.subarray(0, KEY), material.subarray(KEY, KEY + IV));
  decipher.setAuthTag(material.subarray(KEY + IV));
  return Buffer.concat([decipher.update(sealed), decipher.final()]);
}
