/**
 * Uploads to send (POST /api/v1/attachments): the gateway streams the bytes into the uploads
 * bucket and asks to record them; size and SHA-256 are read from the store, not taken from
 * the caller. An upload is referable by sends of its tenant for UPLOAD_LIFETIME_MS; each
 * send copies its bytes into the attachments bucket, so the message keeps them after that.
 */
import { AppError, UPLOAD_LIFETIME_MS, type Tenant } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { UploadRepository, UploadRow } from '../repo/upload.repository';

/** What the uploads bucket says of an object: its size and digest ("SHA-256=" and base64url). */
export interface UploadObjects {
  info(object: string): Promise<{ size: number; digest: string } | null>;
}

export interface UploadView {
  attachment_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  expires_at: string;
}

/** The object store's "SHA-256=<base64url>" as lowercase hex; null for another algorithm or a malformed value. */
export function sha256Hex(digest: string): string | null {
  const m = /^SHA-256=([A-Za-z0-9_-]{43}=?)$/.exec(digest);
  if (!m) return null;
  const bytes = Buffer.from(m[1]!, 'base64url');
  return bytes.length === 32 ? bytes.toString('hex') : null;
}

export function viewOf(row: UploadRow): UploadView {
  return { attachment_id: row.id, filename: row.filename, content_type: row.content_type, size: row.size, sha256: row.sha256, expires_at: row.expires_at.toISOString() };
}

export class Uploads {
  constructor(
    private readonly repo: UploadRepository,
    private readonly objects: UploadObjects,
    private readonly clock: Clock,
    private readonly maxBytes: number,
  ) {}

  async register(t: Tenant, req: { object: string; filename: string; content_type: string }): Promise<UploadView> {
    const info = await this.objects.info(req.object);
    if (!info) throw new AppError('invalid_request', 'the upload was not stored; send it again');
    if (info.size > this.maxBytes) throw new AppError('payload_too_large', `the file is ${info.size} bytes; a message can carry at most ${this.maxBytes} bytes (SEND_MAX_MESSAGE_BYTES)`);
    const sha256 = sha256Hex(info.digest);
    if (!sha256) throw new Error(`upload ${req.object} has a digest of another kind: ${info.digest}`);
    const now = this.clock.now();
    const row: UploadRow = { id: req.object, org_id: t.org_id, env_id: t.env_id, filename: req.filename, content_type: req.content_type, size: info.size, sha256, created_at: now, expires_at: new Date(now.getTime() + UPLOAD_LIFETIME_MS) };
    if (!(await this.repo.insert(row))) throw new AppError('conflict', `upload ${req.object} is recorded already`);
    return viewOf(row);
  }

  /**
   * The tenant's uploads of these ids, in their order: another tenant's or an unknown id is
   * 404, an expired one 410, each naming the attachment.
   */
  async resolve(t: Tenant, ids: string[]): Promise<UploadRow[]> {
    const rows = new Map((await this.repo.find(t, [...new Set(ids)])).map((r) => [r.id, r]));
    const now = this.clock.now().getTime();
    return ids.map((id) => {
      const row = rows.get(id);
      if (!row) throw new AppError('not_found', `attachment ${id} not found: upload it with POST /api/v1/attachments`);
      if (row.expires_at.getTime() <= now) throw new AppError('expired', `attachment ${id} expired at ${row.expires_at.toISOString()} (uploads are kept 24 hours); upload it again`);
      return row;
    });
  }

  /** Forgets uploads that expired more than an hour ago (their objects go with the bucket's lifetime). */
  prune(): Promise<number> {
    return this.repo.deleteExpired(new Date(this.clock.now().getTime() - 3_600_000));
  }
}
