/**
 * Environments without a database: who sees which environment, when one may be deleted, and
 * that the default environment's members are the organization's. The store is an in-memory
 * stand-in with the repositories' semantics (every query filters on org_id).
 */
import { AppError, DEFAULT_PLAN_LIMITS, newId, type AuthContext, type Fact, type PlanName, type Role } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { EnvironmentMemberRow, EnvironmentRepository, EnvironmentRow } from '../repo/environment.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import { deletionRefusal, Environments, maySeeEnvironment, membershipChangeRefusal, seesEveryEnvironment } from './environments';
import type { EnvironmentFacts, Transact } from './ports';
import { PlanGuard } from './plan-guard';
import { refusalOf } from '@mailroom/testing';

const staging = { name: 'staging', is_default: false };
const production = { name: 'production', is_default: true };
const empty = { inboxes: 0, api_keys: 0, webhook_endpoints: 0, domains: 0 };

describe('who sees an environment', () => {
  it('lets owners and admins see every environment, members and viewers only theirs and the default one', () => {
    expect(seesEveryEnvironment('owner')).toBe(true);
    expect(seesEveryEnvironment('admin')).toBe(true);
    expect(seesEveryEnvironment('member')).toBe(false);
    expect(seesEveryEnvironment('viewer')).toBe(false);
    for (const role of ['owner', 'admin'] as const) expect(maySeeEnvironment(role, staging, false)).toBe(true);
    for (const role of ['member', 'viewer'] as const) {
      expect(maySeeEnvironment(role, staging, false)).toBe(false);
      expect(maySeeEnvironment(role, staging, true)).toBe(true);
      expect(maySeeEnvironment(role, production, false)).toBe(true);
    }
  });
});

describe('deleting an environment', () => {
  it('refuses the default environment with a conflict', () => {
    const refusal = deletionRefusal(production, empty);
    expect(refusal).toBeInstanceOf(AppError);
    expect([refusal?.code, refusal?.message]).toEqual(['conflict', expect.stringMatching(/default environment/)]);
  });

  it('refuses an environment that holds anything, naming what', () => {
    expect(deletionRefusal(staging, { ...empty, inboxes: 2 })?.message).toMatch(/2 inbox\(es\)/);
    expect(deletionRefusal(staging, { ...empty, api_keys: 1 })?.message).toMatch(/1 API key/);
    expect(deletionRefusal(staging, { inboxes: 1, api_keys: 1, webhook_endpoints: 3, domains: 2 })?.message).toMatch(/1 inbox\(es\), 1 API key\(s\), 3 webhook endpoint\(s\), 2 domain\(s\)/);
    expect(deletionRefusal(staging, { ...empty, webhook_endpoints: 1 })?.code).toBe('conflict');
  });

  it('allows an empty environment that is not the default', () => {
    expect(deletionRefusal(staging, empty)).toBeUndefined();
  });
});

describe("an environment's members", () => {
  it('cannot be changed in the default environment, which every member has', () => {
    expect(membershipChangeRefusal(production)?.code).toBe('conflict');
    expect(membershipChangeRefusal(staging)).toBeUndefined();
  });
});

/** The repositories' semantics in memory: every query filters on org_id. */
class MemoryEnvironments implements Pick<EnvironmentRepository, keyof EnvironmentRepository> {
  envs: EnvironmentRow[] = [];
  members: (EnvironmentMemberRow & { row: MemberRow })[] = [];
  async list(orgId: string, opts: { limit: number; after?: string | undefined; visibleTo?: string | undefined }) {
    return this.envs
      .filter((e) => e.org_id === orgId && (!opts.after || e.id > opts.after))
      .filter((e) => opts.visibleTo === undefined || e.is_default || this.members.some((m) => m.env_id === e.id && m.user_id === opts.visibleTo))
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, opts.limit);
  }
  async find(orgId: string, envId: string) {
    return this.envs.find((e) => e.org_id === orgId && e.id === envId);
  }
  async count(orgId: string) {
    return this.envs.filter((e) => e.org_id === orgId).length;
  }
  async insert(row: Omit<EnvironmentRow, 'is_default'>) {
    if (this.envs.some((e) => e.org_id === row.org_id && e.name === row.name)) return false;
    this.envs.push({ ...row, is_default: false });
    return true;
  }
  async rename(orgId: string, envId: string, name: string) {
    const env = await this.find(orgId, envId);
    if (!env) return undefined;
    if (this.envs.some((e) => e.org_id === orgId && e.name === name && e.id !== envId)) return 'duplicate' as const;
    env.name = name;
    return { ...env };
  }
  async delete(orgId: string, envId: string) {
    const before = this.envs.length;
    this.envs = this.envs.filter((e) => !(e.org_id === orgId && e.id === envId && !e.is_default));
    this.members = this.members.filter((m) => m.env_id !== envId);
    return this.envs.length < before;
  }
  async isMember(orgId: string, envId: string, userId: string) {
    return this.members.some((m) => m.org_id === orgId && m.env_id === envId && m.user_id === userId);
  }
  async listMembers(orgId: string, envId: string, opts: { limit: number; after?: string | undefined }) {
    return this.members
      .filter((m) => m.org_id === orgId && m.env_id === envId && (!opts.after || m.member_id > opts.after))
      .sort((a, b) => a.member_id.localeCompare(b.member_id))
      .slice(0, opts.limit)
      .map((m) => ({ ...m.row, added_at: m.created_at }));
  }
  async addMember(row: EnvironmentMemberRow) {
    if (this.members.some((m) => m.env_id === row.env_id && m.member_id === row.member_id)) return 'already' as const;
    const member = this.orgMembers.find((m) => m.id === row.member_id);
    if (!member || !this.envs.some((e) => e.id === row.env_id)) return 'gone' as const;
    this.members.push({ ...row, row: member });
    return 'added' as const;
  }
  async removeMember(orgId: string, envId: string, memberId: string) {
    const found = this.members.find((m) => m.org_id === orgId && m.env_id === envId && m.member_id === memberId);
    this.members = this.members.filter((m) => m !== found);
    return found && { env_id: found.env_id, member_id: found.member_id, org_id: found.org_id, user_id: found.user_id, created_at: found.created_at };
  }
  constructor(readonly orgMembers: MemberRow[]) {}
}

const ORG = 'org_01m8a4vabhcrd4hxzk162k1ma9';
const OTHER_ORG = 'org_01m8a4vabhcrd4hxzk162k1mb0';

function setup(contents = { inboxes: 0, api_keys: 0, webhook_endpoints: 0, domains: 0 }) {
  const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
  const orgMembers: MemberRow[] = [];
  const repo = new MemoryEnvironments(orgMembers);
  const memberRepo: Pick<MemberRepository, keyof MemberRepository> = {
    list: async (orgId, opts) => orgMembers.filter((m) => m.org_id === orgId && (!opts.after || m.id > opts.after)).sort((a, b) => a.id.localeCompare(b.id)).slice(0, opts.limit),
    find: async (orgId, id) => orgMembers.find((m) => m.org_id === orgId && m.id === id),
    count: async (orgId) => orgMembers.filter((m) => m.org_id === orgId).length,
    lockActorAndMember: async () => [],
    findByUser: async (orgId, userId) => orgMembers.find((m) => m.org_id === orgId && m.user_id === userId),
    updateRole: async () => false,
    remove: async () => false,
  };
  const memberFacts: Fact<'internal.orgs.environment.member.changed'>[] = [];
  const deletions: Fact<'internal.orgs.environment.deleted'>[] = [];
  const asked: string[] = [];
  const facts: EnvironmentFacts = {
    memberChanged: async (_tx, fact) => void memberFacts.push(fact),
    deleted: async (_tx, fact) => void deletions.push(fact),
    kick: () => {},
  };
  // The stand-in store ignores the transaction; rollback is the database's job (integration tests).
  const transact: Transact = (work) => work({} as OrgsTx);
  const users = { profiles: async (ids: string[]) => ids.map((id) => ({ id, email: `${id}@example.com`, name: null, email_verified: true })) };
  const counts = { count: async (_org: string, envId: string) => (asked.push(envId), contents) };
  // Each organization's plan (enterprise unless a test says otherwise: no limit), against the default table.
  const plans = new Map<string, PlanName>();
  const plan = new PlanGuard(DEFAULT_PLAN_LIMITS, async (orgId) => plans.get(orgId) ?? 'enterprise');
  const environments = new Environments(transact, repo, memberRepo, users, counts, facts, plan, clock);
  const env = (name: string, is_default = false, org = ORG) => {
    const row: EnvironmentRow = { id: newId('environment'), org_id: org, name, is_default, created_at: clock.now() };
    repo.envs.push(row);
    return row;
  };
  const person = (role: Role, org = ORG) => {
    const row: MemberRow = { id: newId('member'), org_id: org, user_id: newId('user'), role, created_at: clock.now() };
    orgMembers.push(row);
    return row;
  };
  const as = (m: MemberRow): AuthContext => ({ kind: 'user', user_id: m.user_id, session_id: 'ses_1', org_id: m.org_id, env_id: 'env_1', role: m.role });
  return { environments, repo, env, person, as, memberFacts, deletions, asked, plans };
}

describe('Environments', () => {
  it('lists every environment for owners and admins, the default and their own for others, page by page', async () => {
    const s = setup();
    const production = s.env('production', true);
    const staging = s.env('staging');
    const qa = s.env('qa');
    s.env('theirs', true, OTHER_ORG);
    const owner = s.person('owner');
    const member = s.person('member');
    await s.environments.addMember(s.as(owner), staging.id, member.id);
    const ids = async (who: MemberRow) => (await s.environments.list(s.as(who), { limit: 100 })).data.map((e) => e.id);
    // In id order (ids made in one millisecond are not in creation order).
    const all = [production.id, staging.id, qa.id].sort();
    expect(await ids(owner)).toEqual(all);
    expect(await ids(member)).toEqual([production.id, staging.id].sort());
    const first = await s.environments.list(s.as(owner), { limit: 2 });
    expect(first.data.map((e) => e.id)).toEqual(all.slice(0, 2));
    const rest = await s.environments.list(s.as(owner), { limit: 2, page_token: first.next_page_token ?? undefined });
    expect([rest.data.map((e) => e.id), rest.next_page_token]).toEqual([all.slice(2), null]);
    expect((await refusalOf(s.environments.list(s.as(owner), { limit: 2, page_token: 'nope' }))).code).toBe('invalid_request');
  });

  it("answers an environment a member was not given, and another organization's, with not_found", async () => {
    const s = setup();
    const staging = s.env('staging');
    const theirs = s.env('theirs', false, OTHER_ORG);
    const owner = s.person('owner');
    const viewer = s.person('viewer');
    expect((await refusalOf(s.environments.get(s.as(viewer), staging.id))).code).toBe('not_found');
    expect((await refusalOf(s.environments.listMembers(s.as(viewer), staging.id, { limit: 10 }))).code).toBe('not_found');
    expect((await refusalOf(s.environments.access({ org_id: ORG, env_id: staging.id, user_id: viewer.user_id, role: 'viewer' }))).code).toBe('not_found');
    expect((await s.environments.access({ org_id: ORG, env_id: staging.id, user_id: owner.user_id, role: 'admin' })).id).toBe(staging.id);
    for (const p of [s.environments.get(s.as(owner), theirs.id), s.environments.rename(s.as(owner), theirs.id, 'x'), s.environments.delete(s.as(owner), theirs.id)]) {
      expect((await refusalOf(p)).code).toBe('not_found');
    }
  });

  it('keeps names unique in the organization, and lets only owners and admins manage', async () => {
    const s = setup();
    s.env('production', true);
    const owner = s.person('owner');
    const member = s.person('member');
    const created = await s.environments.create(s.as(owner), { name: 'staging' });
    expect(created).toMatchObject({ org_id: ORG, name: 'staging', is_default: false });
    expect((await refusalOf(s.environments.create(s.as(owner), { name: 'staging' }))).code).toBe('conflict');
    expect((await refusalOf(s.environments.rename(s.as(owner), created.id, 'production'))).code).toBe('conflict');
    expect((await s.environments.rename(s.as(owner), created.id, 'qa')).name).toBe('qa');
    expect((await refusalOf(s.environments.create(s.as(member), { name: 'mine' }))).code).toBe('forbidden');
  });

  it('refuses one environment more than the plan holds (the default one counts), naming the plan that lifts it', async () => {
    const s = setup();
    s.plans.set(ORG, 'free');
    s.env('production', true);
    s.env('theirs', true, OTHER_ORG);
    s.env('theirs too', false, OTHER_ORG);
    const owner = s.person('owner');
    await s.environments.create(s.as(owner), { name: 'staging' });
    const refusal = await refusalOf(s.environments.create(s.as(owner), { name: 'qa' }));
    expect(refusal).toMatchObject({ code: 'plan_limit', status: 403, message: 'the free plan allows 2 environments; the pro plan allows 10: ask for it with POST /api/v1/org/upgrade-request' });
    expect(s.repo.envs.filter((e) => e.org_id === ORG).map((e) => e.name)).toEqual(['production', 'staging']);
    // Once on pro, there is room again.
    s.plans.set(ORG, 'pro');
    expect((await s.environments.create(s.as(owner), { name: 'qa' })).name).toBe('qa');
  });

  it("goes by the role stored now, not the token's: a demoted admin manages nothing more", async () => {
    const s = setup();
    s.env('production', true);
    const demoted = s.person('member');
    const staging = s.env('staging');
    // The token still says admin (the fact has not reached the gateway yet).
    const stale: AuthContext = { kind: 'user', user_id: demoted.user_id, session_id: 'ses_1', org_id: ORG, env_id: 'env_1', role: 'admin' };
    expect(await refusalOf(s.environments.create(stale, { name: 'qa' }))).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/your role is member/) });
    expect((await refusalOf(s.environments.rename(stale, staging.id, 'qa'))).code).toBe('forbidden');
    expect((await refusalOf(s.environments.delete(stale, staging.id))).code).toBe('forbidden');
    expect((await refusalOf(s.environments.addMember(stale, staging.id, demoted.id))).code).toBe('forbidden');
    expect(s.repo.envs.map((e) => e.name).sort()).toEqual(['production', 'staging']);
  });

  it('gives and takes environments once each, org members only, with a fact for each change', async () => {
    const s = setup();
    const production = s.env('production', true);
    const staging = s.env('staging');
    const admin = s.person('admin');
    const member = s.person('member');
    const stranger = s.person('member', OTHER_ORG);
    const given = await s.environments.addMember(s.as(admin), staging.id, member.id);
    expect(given).toMatchObject({ env_id: staging.id, member_id: member.id, user_id: member.user_id, email: `${member.user_id}@example.com` });
    expect((await refusalOf(s.environments.addMember(s.as(admin), staging.id, member.id))).code).toBe('conflict');
    expect((await refusalOf(s.environments.addMember(s.as(admin), staging.id, stranger.id))).code).toBe('not_found');
    expect((await refusalOf(s.environments.addMember(s.as(admin), production.id, member.id))).code).toBe('conflict');
    expect((await refusalOf(s.environments.removeMember(s.as(admin), production.id, member.id))).code).toBe('conflict');
    expect((await s.environments.listMembers(s.as(member), staging.id, { limit: 10 })).data.map((m) => m.member_id)).toEqual([member.id]);
    expect((await s.environments.listMembers(s.as(member), production.id, { limit: 10 })).data.map((m) => m.member_id)).toEqual([admin.id, member.id].sort());
    await s.environments.removeMember(s.as(admin), staging.id, member.id);
    expect((await refusalOf(s.environments.removeMember(s.as(admin), staging.id, member.id))).code).toBe('not_found');
    expect(s.memberFacts.map((f) => [f.env_id, f.user_id, f.member])).toEqual([
      [staging.id, member.user_id, true],
      [staging.id, member.user_id, false],
    ]);
  });

  it('deletes only an empty environment that is not the default, and announces it', async () => {
    const full = setup({ inboxes: 1, api_keys: 0, webhook_endpoints: 0, domains: 0 });
    const owner = full.person('owner');
    const production = full.env('production', true);
    const staging = full.env('staging');
    expect((await refusalOf(full.environments.delete(full.as(owner), production.id))).code).toBe('conflict');
    expect(full.asked).toEqual([]);
    expect((await refusalOf(full.environments.delete(full.as(owner), staging.id))).message).toMatch(/1 inbox/);
    expect(full.repo.envs).toHaveLength(2);

    const empty = setup();
    const admin = empty.person('admin');
    const qa = empty.env('qa');
    await empty.environments.delete(empty.as(admin), qa.id);
    expect(empty.repo.envs).toEqual([]);
    expect(empty.deletions).toEqual([{ org_id: ORG, env_id: qa.id, deleted_at: '2026-11-26T10:00:00.000Z' }]);
  });
});
