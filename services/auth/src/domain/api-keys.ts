/**
 * API keys: `mr_` + 43 base62 characters (256 bits), shown once, stored as SHA-256.
 * A key is bound to one organization and one environment, and holds a permission set: a
 * named scope (full, read_only, send_only) or an explicit list (libs/contracts
 * permissions.ts). People with keys.manage (owner, admin) create and revoke them; keys
 * cannot manage keys. When orgs deletes an environment, its keys are revoked, and no key is
 * created in it afterwards (404, as for any environment that is not there). A key whose
 * creator's account is deleted does not act until it is recovered (account-deletion.ts), nor
 * one whose creator is suspended until the suspension is lifted (user-suspensions.ts).
 */
import { AppError, auditEntryOf, authorize, encodePageToken, pageCursor, idSchema, keyPermissions, KEY_PERMISSIONS, newId, type ApiKey, type CallOrigin, type Fact, type KeyScope, type Permission, type TenantContext } from '@mailroom/contracts';
import { randomBase62, sha256, type Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { ApiKeyPublicRow, ApiKeyRepository } from '../repo/api-key.repository';
import type { AccountOutbox, DeletedEnvironments, OrgsPort, RevocationPort, Transact } from './ports';

export const API_KEY_PREFIX = 'mr_';
const KEY_PATTERN = /^mr_[0-9A-Za-z]{43}$/;

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
    scope: row.scope,
    permissions: keyPermissions(row.scope, row.permissions),
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}

/**
 * What is stored of a requested permission set: a named scope alone (resolved when the key is
 * used), or `custom` with its list. A list is checked against what keys may hold (the request
 * schema did it already; this keeps the rule where the key is made).
 */
export function scopeOf(input: { scope?: KeyScope | 'custom' | undefined; permissions?: readonly Permission[] | undefined }): { scope: KeyScope | 'custom'; permissions: Permission[] | null } {
  const requested = input.permissions;
  if (!requested) {
    if (input.scope === 'custom') throw new AppError('invalid_request', 'a custom key needs its list of permissions', { details: [{ path: 'permissions', message: 'required when scope is custom' }] });
    return { scope: input.scope ?? 'full', permissions: null };
  }
  if (input.scope !== undefined && input.scope !== 'custom') {
    throw new AppError('invalid_request', `a key of scope ${input.scope} has that scope's permissions`, { details: [{ path: 'permissions', message: 'give scope custom (or no scope) with a list' }] });
  }
  const refused = requested.filter((p) => !KEY_PERMISSIONS.includes(p));
  if (refused.length) throw new AppError('invalid_request', `an API key cannot hold ${refused.join(', ')}`, { details: [{ path: 'permissions', message: `a key holds at most ${KEY_PERMISSIONS.join(', ')}` }] });
  return { scope: 'custom', permissions: KEY_PERMISSIONS.filter((p) => requested.includes(p)) };
}

const cursor = z.object({ before: idSchema('apiKey') });

/** Keys are managed by people: an API key holds neither permission, so the caller is a user. */
function manager(ctx: TenantContext, permission: 'keys.read' | 'keys.manage'): Extract<TenantContext, { kind: 'user' }> {
  const user = authorize(ctx, permission);
  if (user.kind !== 'user') throw new AppError('forbidden', 'an API key cannot manage API keys');
  return user;
}

export class ApiKeys {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<ApiKeyRepository, keyof ApiKeyRepository>,
    private readonly deleted: DeletedEnvironments,
    private readonly orgs: OrgsPort,
    private readonly revocations: RevocationPort,
    private readonly clock: Clock,
    private readonly audit: Pick<AccountOutbox, 'audit' | 'kick'>,
  ) {}

  async create(
    ctx: TenantContext,
    input: { name: string; env_id?: string | undefined; scope?: KeyScope | 'custom' | undefined; permissions?: Permission[] | undefined },
    origin: CallOrigin = {},
  ): Promise<ApiKey & { key: string }> {
    const user = manager(ctx, 'keys.manage');
    const { scope, permissions } = scopeOf(input);
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
      scope,
      permissions,
      created_by: user.user_id,
      created_at: now,
    };
    const entry = auditEntryOf({ auth: ctx, ...origin }, now, {
      action: 'api_key.created',
      org_id: row.org_id,
      target: { type: 'api_key', id: row.id },
      details: { name: row.name, env_id: row.env_id, scope, key_prefix: row.key_prefix },
    });
    await this.transact(async (tx) => {
      // A stale gateway (or one in the instant before orgs' fact arrives) may still let a request
      // act in an environment orgs deleted: the insert is refused once its deletion is recorded here.
      if (!(await this.repo.insert(row, tx))) throw AppError.notFound('environment');
      await this.audit.audit(tx, entry);
    });
    this.audit.kick();
    return { ...toApiKey({ ...row, last_used_at: null }), key };
  }

  async list(ctx: TenantContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: ApiKey[]; next_page_token: string | null }> {
    const user = manager(ctx, 'keys.read');
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.repo.listLive(user.org_id, { limit: q.limit + 1, ...(before ? { before } : {}) });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toApiKey), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /** How many live keys the environment holds (orgs asks before deleting an environment). */
  async count(t: { org_id: string; env_id: string }): Promise<{ count: number }> {
    return { count: await this.repo.countLive(t.org_id, t.env_id) };
  }

  async get(ctx: TenantContext, id: string): Promise<ApiKey> {
    const user = manager(ctx, 'keys.read');
    const row = await this.repo.findLive(user.org_id, id);
    if (!row) throw AppError.notFound('API key');
    return toApiKey(row);
  }

  async revoke(ctx: TenantContext, id: string, origin: CallOrigin = {}): Promise<void> {
    const user = manager(ctx, 'keys.manage');
    const now = this.clock.now();
    await this.transact(async (tx) => {
      if (!(await this.repo.revoke(user.org_id, id, now, tx))) throw AppError.notFound('API key');
      await this.audit.audit(tx, auditEntryOf({ auth: ctx, ...origin }, now, { action: 'api_key.revoked', org_id: user.org_id, target: { type: 'api_key', id } }));
    });
    this.audit.kick();
    await this.revocations.apiKeyRevoked({ key_id: id, org_id: user.org_id });
  }

  /**
   * Orgs deleted an environment: its live keys are revoked with the record of the deletion,
   * in one transaction (a key created before it is revoked, one after is refused), then
   * announced so gateways drop them from their caches at once. A fact read again revokes and
   * announces nothing.
   */
  async environmentDeleted(fact: Fact<'internal.orgs.environment.deleted'>): Promise<{ removed: number }> {
    const revoked = await this.transact(async (trx) => {
      await this.deleted.record(trx, { org_id: fact.org_id, env_id: fact.env_id, deleted_at: new Date(fact.deleted_at) });
      return this.repo.revokeAllIn(fact.org_id, fact.env_id, this.clock.now(), trx);
    });
    for (const key_id of revoked) await this.revocations.apiKeyRevoked({ key_id, org_id: fact.org_id });
    return { removed: revoked.length };
  }

  /** For the gateway: which org and environment a presented key acts in, and what it may do there. */
  async verify(key: string): Promise<{ key_id: string; org_id: string; env_id: string; scope: KeyScope | 'custom'; permissions: Permission[] }> {
    const invalid = new AppError('unauthorized', 'API key is invalid or has been revoked');
    if (!KEY_PATTERN.test(key)) throw invalid;
    const row = await this.repo.findLiveByHash(sha256(key));
    if (!row) throw invalid;
    // Acting for a deleted account: refused until it is recovered (revoked when it is purged).
    if (row.creator_deleted_at !== null) throw new AppError('unauthorized', 'this API key does not work while the account that created it is deleted (it works again if the account is recovered within 30 days)');
    if (row.creator_suspended_at !== null) throw new AppError('unauthorized', 'this API key does not work while the account that created it is suspended');
    await this.repo.touch(row.id, this.clock.now());
    return { key_id: row.id, org_id: row.org_id, env_id: row.env_id, scope: row.scope, permissions: keyPermissions(row.scope, row.permissions) };
  }
}
