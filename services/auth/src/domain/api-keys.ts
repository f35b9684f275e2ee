/**
 * API keys: `mr_` + 43 base62 characters (256 bits), shown once, stored as SHA-256.
 * A key is bound to one organization and one environment. People with the owner or
 * admin role manage them; keys cannot manage keys.
 */
import { randomBytes } from 'node:crypto';
import { AppError, authorize, decodePageToken, encodePageToken, idSchema, newId, type ApiKey, type TenantContext } from '@mailroom/contracts';
import { sha256, type Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { ApiKeyPublicRow, ApiKeyRepository } from '../repo/api-key.repository';
import type { OrgsPort, RevocationPort } from './ports';

export const API_KEY_PREFIX = 'mr_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^mr_[0-9A-Za-z]{43}$/;

/** n characters, each uniform over 62 (rejection sampling: no modulo bias). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      if (byte < 248 && out.length < n) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function newApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomBase62(43)}`;
}

function toApiKey(row: ApiKeyPublicRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    org_id: row.org_id,
    env_id: row.env_id,
    key_prefix: row.key_prefix,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}

const cursor = z.object({ before: idSchema('apiKey') });

/** Keys are managed by people: an API key holds neither permission, so the caller is a user. */
function manager(ctx: TenantContext, permission: 'apiKeys.read' | 'apiKeys.write'): Extract<TenantContext, { kind: 'user' }> {
  const user = authorize(ctx, permission);
  if (user.kind !== 'user') throw new AppError('forbidden', 'an API key cannot manage API keys');
  return user;
}

export class ApiKeys {
  constructor(
    private readonly repo: ApiKeyRepository,
    private readonly orgs: OrgsPort,
    private readonly revocations: RevocationPort,
    private readonly clock: Clock,
  ) {}

  async create(ctx: TenantContext, input: { name: string; env_id?: string | undefined }): Promise<ApiKey & { key: string }> {
    const user = manager(ctx, 'apiKeys.write');
    const envId = input.env_id ?? user.env_id;
    if (envId !== user.env_id) await this.orgs.environment(user.org_id, envId);
    const key = newApiKeySecret();
    const now = this.clock.now();
    const row = {
      id: newId('apiKey'),
      org_id: user.org_id,
      env_id: envId,
      name: input.name,
      key_hash: sha256(key),
      key_prefix: key.slice(0, 10),
      created_by: user.user_id,
      created_at: now,
    };
    await this.repo.insert(row);
    return { ...toApiKey({ ...row, last_used_at: null }), key };
  }

  async list(ctx: TenantContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: ApiKey[]; next_page_token: string | null }> {
    const user = manager(ctx, 'apiKeys.read');
    let before: string | undefined;
    if (q.page_token) {
      const c = decodePageToken(q.page_token, cursor);
      if (!c) throw new AppError('invalid_request', 'page_token is not valid', { details: [{ path: 'page_token', message: 'not a token from this list' }] });
      before = c.before;
    }
    const rows = await this.repo.listLive(user.org_id, { limit: q.limit + 1, ...(before ? { before } : {}) });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toApiKey), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async get(ctx: TenantContext, id: string): Promise<ApiKey> {
    const user = manager(ctx, 'apiKeys.read');
    const row = await this.repo.findLive(user.org_id, id);
    if (!row) throw AppError.notFound('API key');
    return toApiKey(row);
  }

  async revoke(ctx: TenantContext, id: string): Promise<void> {
    const user = manager(ctx, 'apiKeys.write');
    if (!(await this.repo.revoke(user.org_id, id, this.clock.now()))) throw AppError.notFound('API key');
    await this.revocations.apiKeyRevoked({ key_id: id, org_id: user.org_id });
  }

  /** For the gateway: which org and environment a presented key acts in. */
  async verify(key: string): Promise<{ key_id: string; org_id: string; env_id: string }> {
    const invalid = new AppError('unauthorized', 'API key is invalid or has been revoked');
    if (!KEY_PATTERN.test(key)) throw invalid;
    const row = await this.repo.findLiveByHash(sha256(key));
    if (!row) throw invalid;
    await this.repo.touch(row.id, this.clock.now());
    return { key_id: row.id, org_id: row.org_id, env_id: row.env_id };
  }
}
