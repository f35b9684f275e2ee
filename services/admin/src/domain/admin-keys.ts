/**
 * Admin keys: the credential of the people who run a Mailroom deployment (issue 28). `mra_` +
 * 43 base62 characters (256 bits), shown once, stored as SHA-256. A key acts until it is
 * revoked or its expiry passes; the first one comes from the command (cli.ts), the others from
 * an admin key (`created_by`). A key may revoke itself; revoking twice keeps the first time.
 * Admin keys act on admin routes only, and tenant credentials never do (the gateway).
 */
import { ADMIN_KEY_PATTERN, ADMIN_KEY_PREFIX, AppError, auditEntryOf, encodePageToken, idSchema, newId, pageCursor, type AdminKey, type AuditedCall } from '@mailroom/contracts';
import { randomBase62, sha256, type Clock, type Transact } from '@mailroom/platform';
import { z } from 'zod';
import type { AdminKeyPublicRow, AdminKeyRepository } from '../repo/admin-key.repository';
import type { AdminTx } from '../repo/tables';
import type { AuditLog } from './audit-log';

const cursor = z.object({ before: idSchema('adminKey') });

export function newAdminKeySecret(): string {
  return `${ADMIN_KEY_PREFIX}${randomBase62(43)}`;
}

export function hashOf(key: string): string {
  return sha256(key).toString('base64url');
}

/** Whether a key acts at `now`: not revoked, and its expiry (if any) still ahead. */
export function actsAt(key: Pick<AdminKeyPublicRow, 'revoked_at' | 'expires_at'>, now: Date): boolean {
  return key.revoked_at === null && (key.expires_at === null || key.expires_at.getTime() > now.getTime());
}

export function toAdminKey(row: AdminKeyPublicRow): AdminKey {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/** The command line's call: the operator at the shell, with no request. */
export const COMMAND_CALL: AuditedCall = { auth: { kind: 'anonymous' } };

export class AdminKeys {
  constructor(
    private readonly transact: Transact<AdminTx>,
    private readonly repo: Pick<AdminKeyRepository, keyof AdminKeyRepository>,
    private readonly audit: Pick<AuditLog, 'record'>,
    private readonly clock: Clock,
  ) {}

  /** A new key; `by`: the admin key asking (`call`'s), null for the command. Audited with it. */
  async create(by: string | null, input: { name: string; expires_at?: string | undefined }, call: AuditedCall): Promise<AdminKey & { key: string }> {
    const now = this.clock.now();
    const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
    if (expiresAt && expiresAt.getTime() <= now.getTime()) {
      throw new AppError('invalid_request', 'expires_at must be in the future', { details: [{ path: 'expires_at', message: `before now (${now.toISOString()})` }] });
    }
    const key = newAdminKeySecret();
    const row = { id: newId('adminKey'), name: input.name, key_hash: hashOf(key), key_prefix: key.slice(0, ADMIN_KEY_PREFIX.length + 4), created_by: by, created_at: now, expires_at: expiresAt };
    const entry = auditEntryOf(call, now, {
      action: 'admin_key.created',
      org_id: null,
      target: { type: 'admin_key', id: row.id },
      details: { name: row.name, expires_at: expiresAt?.toISOString() ?? null },
      ...(by === null ? { actor: { type: 'command' as const, id: null } } : {}),
    });
    await this.transact(async (tx) => {
      await this.repo.insert(row, tx);
      await this.audit.record(entry, tx);
    });
    const { key_hash: _hash, ...shown } = row;
    return { ...toAdminKey({ ...shown, last_used_at: null, revoked_at: null }), key };
  }

  async list(q: { limit: number; page_token?: string | undefined }): Promise<{ data: AdminKey[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.repo.list(q.limit + 1, before);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toAdminKey), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async get(id: string): Promise<AdminKey> {
    const row = await this.repo.find(id);
    if (!row) throw AppError.notFound('admin key');
    return toAdminKey(row);
  }

  /** Revokes the key; the first revocation is audited (revoking again changes nothing, and says nothing). */
  async revoke(id: string, call: AuditedCall): Promise<void> {
    const now = this.clock.now();
    await this.transact(async (tx) => {
      const row = await this.repo.revoke(id, now, tx);
      if (!row) {
        if (!(await this.repo.find(id, tx))) throw AppError.notFound('admin key');
        return;
      }
      await this.audit.record(auditEntryOf(call, now, { action: 'admin_key.revoked', org_id: null, target: { type: 'admin_key', id }, details: { name: row.name } }), tx);
    });
  }

  /** Who the key is; 401 for anything that does not act (malformed, unknown, revoked, expired), all alike. */
  async verify(key: string): Promise<{ admin_key_id: string }> {
    const refused = new AppError('unauthorized', 'admin key is invalid, revoked or expired');
    if (!ADMIN_KEY_PATTERN.test(key)) throw refused;
    const row = await this.repo.findByHash(hashOf(key));
    const now = this.clock.now();
    if (!row || !actsAt(row, now)) throw refused;
    await this.repo.touch(row.id, now);
    return { admin_key_id: row.id };
  }
}
