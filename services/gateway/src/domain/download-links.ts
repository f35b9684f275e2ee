/**
 * Signed download links (issue 31, part 3): a link to one stored message or attachment that
 * needs no Authorization header, so browsers, curl and an agent's tools can fetch it. The
 * token names the object (inbox, message, attachment or the raw message), its tenant and the
 * time it expires, and carries an HMAC-SHA256 of all of them under a key derived from the
 * server's secret; it is checked in constant time, and an altered or expired token is refused
 * (403, invalid_link or link_expired). The token itself is not stored anywhere: nothing to revoke, it simply runs out.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppError } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';

/** What a link opens: a message's raw bytes (attachment_id null) or one of its attachments, in one tenant. */
export interface LinkTarget {
  org_id: string;
  env_id: string;
  inbox_id: string;
  message_id: string;
  attachment_id: string | null;
}

/** The default lifetime of a link: an hour, long enough to hand it to a tool, short enough not to be a standing credential. */
export const DOWNLOAD_LINK_TTL_SECONDS_DEFAULT = 3600;

const VERSION = 'v1';
/** What stands for "the raw message" where an attachment id would be. */
const RAW = 'raw';
/** An id of the platform (prefix, underscore, time-sortable part): never a dot, so dots can separate the parts. */
const ID = /^[a-z]{2,6}_[0-9a-z]{10,40}$/i;
const EXPIRY = /^[1-9][0-9]{0,11}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The links' own key, derived from SECRETS_ENCRYPTION_KEY (HKDF-SHA256) so no other use of
 * that secret (sealed secrets, code hashes) shares a key with links.
 */
export function downloadLinkKey(secretsKeyBase64: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretsKeyBase64, 'base64'), Buffer.alloc(0), 'mailroom download links v1', 32));
}

export class DownloadLinks {
  constructor(
    private readonly key: Buffer,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {}

  private mac(parts: string[]): Buffer {
    return createHmac('sha256', this.key).update(`mailroom-download\n${parts.join('\n')}`).digest();
  }

  /** When a link signed now stops working, in Unix seconds: now plus the configured lifetime. */
  expiry(): number {
    return Math.floor(this.clock.now().getTime() / 1000) + this.ttlSeconds;
  }

  /** A token for `target`, valid until `expires` (Unix seconds; by default the configured lifetime from now), and when it stops. */
  sign(target: LinkTarget, expires = this.expiry()): { token: string; expires_at: Date } {
    const parts = [VERSION, target.org_id, target.env_id, target.inbox_id, target.message_id, target.attachment_id ?? RAW, String(expires)];
    return { token: `${parts.join('.')}.${this.mac(parts).toString('base64url')}`, expires_at: new Date(expires * 1000) };
  }

  /**
   * What the token opens, or 403 in the error shape: malformed or altered (one answer for
   * both, checked in constant time), or expired (said so, with when: a fresh link comes with
   * the next read of the message).
   */
  verify(token: string): LinkTarget {
    const altered = () => new AppError('invalid_link', 'the download link is not valid (altered or incomplete); read the message again for a fresh one');
    const parts = token.split('.');
    if (parts.length !== 8) throw altered();
    const [version, org, env, inbox, message, attachment, expires, signature] = parts as [string, string, string, string, string, string, string, string];
    if (version !== VERSION || !SIGNATURE.test(signature) || !EXPIRY.test(expires)) throw altered();
    if (![org, env, inbox, message].every((id) => ID.test(id)) || (attachment !== RAW && !ID.test(attachment))) throw altered();
    const expected = this.mac(parts.slice(0, 7));
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw altered();
    const expiresAt = Number(expires) * 1000;
    if (this.clock.now().getTime() >= expiresAt) {
      throw new AppError('link_expired', `the download link expired at ${new Date(expiresAt).toISOString()}; read the message again for a fresh one`);
    }
    return { org_id: org, env_id: env, inbox_id: inbox, message_id: message, attachment_id: attachment === RAW ? null : attachment };
  }
}

/** Where the gateway serves links: <public URL><DOWNLOAD_PATH><token>. */
export const DOWNLOAD_PATH = '/api/v1/downloads/';

interface LinkableMessage {
  inbox_id: string;
  message_id: string;
  attachments: { attachment_id: string }[];
}

export type Linked<M extends LinkableMessage> = Omit<M, 'attachments'> & {
  attachments: (M['attachments'][number] & { download_url: string })[];
  raw_download_url: string;
  download_urls_expire_at: string;
};

/**
 * The message with its signed links, all of one lifetime: raw_download_url (the raw message),
 * each attachment's download_url, and download_urls_expire_at. `base` is the API's public URL.
 */
export function withDownloadLinks<M extends LinkableMessage>(m: M, tenant: { org_id: string; env_id: string }, links: DownloadLinks, base: string): Linked<M> {
  const expires = links.expiry();
  const link = (attachment_id: string | null) => links.sign({ ...tenant, inbox_id: m.inbox_id, message_id: m.message_id, attachment_id }, expires);
  const raw = link(null);
  return {
    ...m,
    attachments: m.attachments.map((a) => ({ ...a, download_url: `${base}${DOWNLOAD_PATH}${link(a.attachment_id).token}` })),
    raw_download_url: `${base}${DOWNLOAD_PATH}${raw.token}`,
    download_urls_expire_at: raw.expires_at.toISOString(),
  };
}
