/**
 * VERP return paths: `bounces+<message id>-<mac>@<bounce domain>`. Reports come back to the
 * envelope sender, so the address alone says which message they are about, even when the
 * reporting server strips our headers. The MAC (HMAC-SHA256, 10 base32 characters) keeps
 * someone who knows a message id from forging reports that would suppress its recipients.
 * Mail from a custom domain returns to `bounces.<that domain>` (a CNAME to ours, checked by
 * the domains service): reports there are ours too, the MAC deciding as everywhere.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { BOUNCE_LABEL, VERP_LOCAL_PART } from '@mailroom/contracts';
import { constantTimeEqual } from '@mailroom/platform';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The bounce name of a custom domain: `bounces.<domain>` (the domains service's records). */
const CUSTOM_BOUNCE_PREFIX = `${BOUNCE_LABEL}.`;

function split(address: string): { local: string; domain: string } | null {
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf('@');
  return at > 0 ? { local: a.slice(0, at), domain: a.slice(at + 1) } : null;
}

export class Verp {
  // A KeyObject: an HMAC given the key as a Buffer imports it again each time (16 us vs 3).
  private readonly key: KeyObject;

  constructor(
    secret: string,
    readonly domain: string,
  ) {
    this.key = createSecretKey(createHmac('sha256', Buffer.from(secret, 'base64')).update('mailroom.verp').digest());
  }

  private mac(messageId: string): string {
    const digest = createHmac('sha256', this.key).update(messageId).digest();
    let out = '';
    for (let i = 0; i < 10; i++) out += ALPHABET[digest[i]! & 31];
    return out;
  }

  /** `domain`: a custom domain's bounce name (`bounces.<domain>`); default the platform's bounce domain. */
  address(messageId: string, domain: string = this.domain): string {
    return `bounces+${messageId}-${this.mac(messageId)}@${domain}`;
  }

  /** The message a report is about, or null when the address is not one of ours (our bounce domain or a custom domain's bounce name) or its MAC is wrong. */
  messageOf(address: string): string | null {
    const parts = split(address);
    const ours = parts !== null && (parts.domain === this.domain || (parts.domain.startsWith(CUSTOM_BOUNCE_PREFIX) && parts.domain.length > CUSTOM_BOUNCE_PREFIX.length));
    const m = ours ? VERP_LOCAL_PART.exec(parts.local) : null;
    if (!m) return null;
    return constantTimeEqual(m[2]!, this.mac(m[1]!)) ? m[1]! : null;
  }
}

