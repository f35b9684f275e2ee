/**
 * Inboxes of a deleted environment, without a database: deleted with the record of the
 * deletion, refused afterwards, and a fact read again changes nothing. The store is an
 * in-memory stand-in with the repository's semantics (every query filters on the tenant).
 */
import { DEFAULT_PLAN_LIMITS, newId, type Tenant } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { MemoryDeletedEnvironments, memoryTransact, refusalOf } from '@mailroom/testing';
import type { InboxRepository, InboxRow } from '../repo/inbox.repository';
import type { MailboxDb } from '../repo/tables';
import { Inboxes } from './inboxes';
import type { CustomDomainsPort, PlanLimitsPort } from './ports';

class MemoryInboxes implements Pick<InboxRepository, keyof InboxRepository> {
  rows: InboxRow[] = [];
  constructor(private readonly deleted: MemoryDeletedEnvironments) {}
  private live(t: Tenant) {
    return this.rows.filter((r) => r.org_id === t.org_id && r.env_id === t.env_id && !r.deleted_at);
  }
  async insert(row: Omit<InboxRow, 'deleted_at'>): Promise<'inserted' | 'address_taken' | 'environment_deleted'> {
    if (this.deleted.has(row.org_id, row.env_id)) return 'environment_deleted';
    if (this.rows.some((r) => r.address === row.address && !r.deleted_at)) return 'address_taken';
    this.rows.push({ ...row, deleted_at: null });
    return 'inserted';
  }
  async countLive(t: Tenant) {
    return this.live(t).length;
  }
  async listLiveOnDomain(t: Tenant, domain: string, limit: number) {
    return this.live(t)
      .filter((r) => r.domain === domain)
      .slice(0, limit);
  }
  async countLiveOnDomain(t: Tenant, domain: string) {
    return this.live(t).filter((r) => r.domain === domain).length;
  }
  async lockOrganization() {}
  async countLiveInOrg(orgId: string) {
    return this.rows.filter((r) => r.org_id === orgId && !r.deleted_at).length;
  }
  async find(t: Tenant, id: string) {
    return this.live(t).find((r) => r.id === id);
  }
  async list(t: Tenant, limit: number) {
    return this.live(t).slice(0, limit);
  }
  async update(t: Tenant, id: string, set: Partial<Pick<InboxRow, 'display_name' | 'status'>>, now: Date) {
    const row = await this.find(t, id);
    if (row) Object.assign(row, set, { updated_at: now });
    return row;
  }
  async softDelete(t: Tenant, id: string, now: Date) {
    const row = await this.find(t, id);
    if (row) Object.assign(row, { deleted_at: now, updated_at: now });
    return row !== undefined;
  }
  async softDeleteAllIn(t: Tenant, now: Date) {
    const live = this.live(t);
    for (const row of live) Object.assign(row, { deleted_at: now, updated_at: now });
    return live.map((r) => r.id);
  }
  async findLiveByAddress(address: string) {
    return this.rows.find((r) => r.address === address && !r.deleted_at);
  }
  async ownerAt() {
    return undefined;
  }
  async findAnyById(id: string) {
    return this.rows.find((r) => r.id === id);
  }
}

const org = newId('organization');
const staging: Tenant = { org_id: org, env_id: newId('environment') };
const production: Tenant = { org_id: org, env_id: newId('environment') };
const fact = { ...staging, deleted_at: '2026-01-01T00:00:00.000Z' };

/** staging has example.com verified and pending.example pending; other environments have none. */
const domains: CustomDomainsPort = {
  async statusOf(t, name) {
    if (t.env_id !== staging.env_id) return null;
    if (name === 'example.com') return { domain_name: name, verification_status: 'verified', failure_reason: null };
    if (name === 'pending.example') return { domain_name: name, verification_status: 'pending', failure_reason: 'SPF record missing' };
    return null;
  },
};

function setUp() {
  const deleted = new MemoryDeletedEnvironments();
  const repo = new MemoryInboxes(deleted);
  // Plans that leave room: the limit is not what these tests are about.
  const plans: PlanLimitsPort = { of: async () => ({ plan: 'enterprise', limits: DEFAULT_PLAN_LIMITS.enterprise, plans: DEFAULT_PLAN_LIMITS }) };
  return { repo, inboxes: new Inboxes(repo, new ManualClock(), 'agents.test', memoryTransact<MailboxDb>(), plans, deleted, domains) };
}

describe('inboxes of a deleted environment', () => {
  it('are deleted as one inbox is, leaving other environments and organizations alone', async () => {
    const { repo, inboxes } = setUp();
    const a = await inboxes.create(staging, { username: 'a' });
    await inboxes.create(staging, {});
    const kept = await inboxes.create(production, { username: 'kept' });
    const theirs = await inboxes.create({ org_id: newId('organization'), env_id: staging.env_id }, { username: 'theirs' });

    expect(await inboxes.environmentDeleted(fact)).toEqual({ removed: 2 });
    await expect(inboxes.get(staging, a.inbox_id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(inboxes.resolve(a.address)).rejects.toMatchObject({ code: 'not_found' });
    // Deleted rows stay (their mail goes with them, as for a deleted inbox).
    expect((await repo.findAnyById(a.inbox_id))?.deleted_at).toBeInstanceOf(Date);
    expect(await inboxes.resolve(kept.address)).toMatchObject({ inbox_id: kept.inbox_id });
    expect(await inboxes.resolve(theirs.address)).toMatchObject({ inbox_id: theirs.inbox_id });
  });

  it('are refused afterwards as an environment that is not there (404), a chosen address or not', async () => {
    const { inboxes } = setUp();
    await inboxes.environmentDeleted(fact);
    for (const input of [{}, { username: 'late' }]) {
      const refusal = await refusalOf(inboxes.create(staging, input));
      expect([refusal.code, refusal.message]).toEqual(['not_found', 'environment not found']);
    }
    expect(await inboxes.create(production, { username: 'late' })).toMatchObject({ address: 'late@agents.test' });
  });

  it('change nothing when the fact comes again', async () => {
    const { repo, inboxes } = setUp();
    await inboxes.create(staging, { username: 'a' });
    await inboxes.environmentDeleted(fact);
    const before = structuredClone(repo.rows);
    expect(await inboxes.environmentDeleted(fact)).toEqual({ removed: 0 });
    expect(repo.rows).toEqual(before);
  });
});

describe('creating an inbox', () => {
  it('answers a taken chosen address with a conflict, not a missing environment', async () => {
    const { inboxes } = setUp();
    await inboxes.create(staging, { username: 'taken' });
    const refusal = await refusalOf(inboxes.create(production, { username: 'taken' }));
    expect(refusal.code).toBe('conflict');
  });
});

describe('inboxes on custom domains', () => {
  it('are created on a domain the environment has verified', async () => {
    const { inboxes } = setUp();
    expect(await inboxes.create(staging, { username: 'support', domain: 'example.com' })).toMatchObject({ address: 'support@example.com' });
    expect(await inboxes.create(staging, { username: 'sales', domain: 'example.com.' })).toMatchObject({ address: 'sales@example.com' });
    expect(await inboxes.create(staging, { username: 'own' })).toMatchObject({ address: 'own@agents.test' });
  });

  it('are refused with 422 on a domain not verified, saying why', async () => {
    const { inboxes } = setUp();
    const refused = await refusalOf(inboxes.create(staging, { username: 'support', domain: 'pending.example' }));
    expect(refused).toMatchObject({ code: 'unprocessable' });
    expect(refused.message).toContain('SPF record missing');
  });

  it("are refused with 422 on a domain of another environment or nobody's", async () => {
    const { inboxes } = setUp();
    await expect(inboxes.create(production, { username: 'support', domain: 'example.com' })).rejects.toMatchObject({ code: 'unprocessable', message: expect.stringContaining('not a domain of this environment') });
    await expect(inboxes.create(staging, { username: 'support', domain: 'elsewhere.example' })).rejects.toMatchObject({ code: 'unprocessable' });
  });
});
