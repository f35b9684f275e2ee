import { newId, type TenantContext } from '@mailroom/contracts';
import { ManualClock, randomBase62 } from '@mailroom/platform';
import { MemoryDeletedEnvironments, memoryTransact, refusalOf } from '@mailroom/testing';
import type { ApiKeyRepository, ApiKeyRow } from '../repo/api-key.repository';
import type { AuthDb } from '../repo/tables';
import { ApiKeys, newApiKeySecret, scopeOf } from './api-keys';
import type { OrgsPort, RevocationPort } from './ports';
import { MemoryOutbox } from '../../test/memory-credentials';

describe('API key secrets', () => {
  it('are mr_ and 43 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, () => newApiKeySecret()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^mr_[0-9A-Za-z]{43}$/);
  });

  it('uses every base62 character with no visible bias', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(700); // expected 1000 each
  });
});

describe('API key permission sets', () => {
  it('stores a named scope alone (full by default) and a list as custom, deduplicated in table order', () => {
    expect(scopeOf({})).toEqual({ scope: 'full', permissions: null });
    expect(scopeOf({ scope: 'send_only' })).toEqual({ scope: 'send_only', permissions: null });
    expect(scopeOf({ permissions: ['mail.send', 'inboxes.read', 'mail.send'] })).toEqual({ scope: 'custom', permissions: ['inboxes.read', 'mail.send'] });
    expect(scopeOf({ scope: 'custom', permissions: ['mail.read'] })).toEqual({ scope: 'custom', permissions: ['mail.read'] });
  });

  it('refuses a custom scope without a list, a list with a named scope, and what only people hold', () => {
    expect(() => scopeOf({ scope: 'custom' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => scopeOf({ scope: 'read_only', permissions: ['mail.read'] })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => scopeOf({ permissions: ['keys.manage'] })).toThrow(expect.objectContaining({ code: 'invalid_request', message: expect.stringMatching(/cannot hold keys.manage/) }));
  });
});

/** The repositories' semantics in memory: a key is inserted only outside a deleted environment, every query filters on org_id. */
class MemoryKeys implements Pick<ApiKeyRepository, keyof ApiKeyRepository> {
  rows: ApiKeyRow[] = [];
  /** Accounts deleted (not purged), by user id: when. */
  readonly deletedAccounts = new Map<string, Date>();
  readonly suspended = new Map<string, Date>();
  constructor(private readonly deleted: MemoryDeletedEnvironments) {}
  async countLive(orgId: string, envId: string) {
    return this.rows.filter((r) => r.org_id === orgId && r.env_id === envId && !r.revoked_at).length;
  }
  async insert(row: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>) {
    if (this.deleted.has(row.org_id, row.env_id)) return false;
    this.rows.push({ ...row, last_used_at: null, revoked_at: null });
    return true;
  }
  async findLiveByHash(hash: Buffer) {
    const row = this.rows.find((r) => r.key_hash.equals(hash) && !r.revoked_at);
    return row && { ...row, creator_deleted_at: (row.created_by && this.deletedAccounts.get(row.created_by)) || null, creator_suspended_at: (row.created_by && this.suspended.get(row.created_by)) || null };
  }
  async liveCreatedBy(userId: string) {
    return this.rows.filter((r) => r.created_by === userId && !r.revoked_at).map(({ id, org_id }) => ({ id, org_id }));
  }
  async revokeCreatedBy(userId: string, now: Date) {
    const live = this.rows.filter((r) => r.created_by === userId && !r.revoked_at);
    for (const r of live) r.revoked_at = now;
    return live.map(({ id, org_id }) => ({ id, org_id }));
  }
  async touch() {}
  async findLive(orgId: string, id: string) {
    return this.rows.find((r) => r.org_id === orgId && r.id === id && !r.revoked_at);
  }
  async listLive(orgId: string) {
    return this.rows.filter((r) => r.org_id === orgId && !r.revoked_at);
  }
  async revokeAllIn(orgId: string, envId: string, now: Date) {
    const live = this.rows.filter((r) => r.org_id === orgId && r.env_id === envId && !r.revoked_at);
    for (const r of live) r.revoked_at = now;
    return live.map((r) => r.id);
  }
  async revoke(orgId: string, id: string, now: Date) {
    const row = await this.findLive(orgId, id);
    if (row) row.revoked_at = now;
    return row !== undefined;
  }
}

describe('API keys of a deleted environment', () => {
  const org = newId('organization');
  const staging = newId('environment');
  const production = newId('environment');
  const owner = (envId: string): TenantContext => ({ kind: 'user', user_id: newId('user'), session_id: newId('session'), org_id: org, env_id: envId, role: 'owner' });
  const fact = { org_id: org, env_id: staging, deleted_at: '2026-01-01T00:00:00.000Z' };

  function setUp() {
    const deleted = new MemoryDeletedEnvironments();
    const repo = new MemoryKeys(deleted);
    const announced: { key_id: string; org_id: string }[] = [];
    const revocations: RevocationPort = { sessionRevoked: async () => {}, apiKeyRevoked: async (f) => void announced.push(f) };
    const orgs: OrgsPort = {
      createForOwner: async () => Promise.reject(new Error('not used')),
      memberships: async () => [],
      organization: async () => Promise.reject(new Error('not used')),
      environment: async () => Promise.reject(new Error('not used')),
    };
    const outbox = new MemoryOutbox();
    const keys = new ApiKeys(memoryTransact<AuthDb>(), repo, deleted, orgs, revocations, new ManualClock(), outbox);
    return { keys, repo, announced, outbox };
  }

  it('audits a creation and a revocation with who did it, never the key itself', async () => {
    const { keys, outbox } = setUp();
    const ctx = owner(production);
    const made = await keys.create(ctx, { name: 'ci', scope: 'send_only' }, { requestId: 'req_x', client: { ip: '198.51.100.4' } });
    await keys.revoke(ctx, made.id);
    await expect(keys.revoke(ctx, made.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(outbox.audited.map((e) => [e.action, e.actor, e.org_id, e.target, e.request_id, e.ip])).toEqual([
      ['api_key.created', { type: 'user', id: ctx.kind === 'user' ? ctx.user_id : '' }, org, { type: 'api_key', id: made.id }, 'req_x', '198.51.100.4'],
      ['api_key.revoked', { type: 'user', id: ctx.kind === 'user' ? ctx.user_id : '' }, org, { type: 'api_key', id: made.id }, null, null],
    ]);
    expect(outbox.audited[0]!.details).toMatchObject({ name: 'ci', scope: 'send_only' });
    expect(JSON.stringify(outbox.audited)).not.toContain(made.key);
  });

  it('revokes the live keys of the environment and announces each, leaving other environments and organizations alone', async () => {
    const { keys, repo, announced } = setUp();
    const a = await keys.create(owner(staging), { name: 'a' });
    const b = await keys.create(owner(staging), { name: 'b' });
    const kept = await keys.create(owner(production), { name: 'production' });
    // The same environment id under another organization is another tenant's: untouched.
    const otherOrg = newId('organization');
    await keys.create({ ...owner(staging), org_id: otherOrg }, { name: 'theirs' });

    expect(await keys.environmentDeleted(fact)).toEqual({ removed: 2 });
    expect(announced.map((f) => f.key_id).sort()).toEqual([a.id, b.id].sort());
    expect(announced.every((f) => f.org_id === org)).toBe(true);
    await expect(keys.verify(a.key)).rejects.toMatchObject({ code: 'unauthorized' });
    expect(await keys.verify(kept.key)).toMatchObject({ key_id: kept.id, env_id: production });
    expect(await repo.countLive(otherOrg, staging)).toBe(1);
  });

  it('refuses a key in it afterwards as an environment that is not there (404)', async () => {
    const { keys } = setUp();
    await keys.environmentDeleted(fact);
    const refusal = await refusalOf(keys.create(owner(staging), { name: 'late' }));
    expect([refusal.code, refusal.message]).toEqual(['not_found', 'environment not found']);
    expect(await keys.create(owner(production), { name: 'fine' })).toMatchObject({ env_id: production });
  });

  it('changes nothing when the fact comes again', async () => {
    const { keys, repo, announced } = setUp();
    await keys.create(owner(staging), { name: 'a' });
    await keys.environmentDeleted(fact);
    const before = structuredClone(repo.rows);
    expect(await keys.environmentDeleted(fact)).toEqual({ removed: 0 });
    expect(repo.rows).toEqual(before);
    expect(announced).toHaveLength(1);
  });
});

describe('API keys of a deleted account', () => {
  it('refuse to act while their creator is deleted or suspended, act again once recovered or lifted, and stay refused once revoked', async () => {
    const deleted = new MemoryDeletedEnvironments();
    const repo = new MemoryKeys(deleted);
    const orgs: OrgsPort = { createForOwner: async () => Promise.reject(new Error('not used')), memberships: async () => [], organization: async () => Promise.reject(new Error('not used')), environment: async () => Promise.reject(new Error('not used')) };
    const keys = new ApiKeys(memoryTransact<AuthDb>(), repo, deleted, orgs, { sessionRevoked: async () => {}, apiKeyRevoked: async () => {} }, new ManualClock(), new MemoryOutbox());
    const ada: TenantContext = { kind: 'user', user_id: newId('user'), session_id: newId('session'), org_id: newId('organization'), env_id: newId('environment'), role: 'owner' };
    const theirs = await keys.create(ada, { name: 'agent' });
    const colleague = await keys.create({ ...ada, user_id: newId('user') }, { name: 'colleague' });
    repo.deletedAccounts.set(ada.user_id, new Date('2026-11-27T10:00:00.000Z'));
    const refusal = await refusalOf(keys.verify(theirs.key));
    expect([refusal.code, refusal.message]).toEqual(['unauthorized', expect.stringMatching(/account that created it is deleted/)]);
    expect(await keys.verify(colleague.key)).toMatchObject({ key_id: colleague.id });
    repo.deletedAccounts.delete(ada.user_id);
    expect(await keys.verify(theirs.key)).toMatchObject({ key_id: theirs.id });
    repo.suspended.set(ada.user_id, new Date('2026-11-27T11:00:00.000Z'));
    await expect(keys.verify(theirs.key)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/account that created it is suspended/) });
    repo.suspended.delete(ada.user_id);
    expect(await keys.verify(theirs.key)).toMatchObject({ key_id: theirs.id });
    await repo.revokeCreatedBy(ada.user_id, new Date());
    await expect(keys.verify(theirs.key)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/invalid or has been revoked/) });
  });
});
