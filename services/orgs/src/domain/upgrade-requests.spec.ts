/**
 * Upgrade requests without a database: who may ask, one pending at a time, the plan the
 * organization is on, paging, another organization's ids, and a platform operator's decision
 * (approval moves the organization's plan; a decided request is not decided again). The stores
 * are in-memory stand-ins with the repositories' semantics (every tenant query filters on org_id).
 */
import { newId, type AuthContext, type PlanName, type Role } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { MemoryAuditTrail, refusalOf } from '@mailroom/testing';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrganizationRepository } from '../repo/organization.repository';
import type { OrgsTx } from '../repo/tables';
import type { UpgradeDecision, UpgradeRequestRepository, UpgradeRequestRow } from '../repo/upgrade-request.repository';
import type { Transact } from './ports';
import { decisionRefusal, requestRefusal, UpgradeRequests } from './upgrade-requests';

const ORG = 'org_01m8a4vabhcrd4hxzk162k1ma9';
const OTHER_ORG = 'org_01m8a4vabhcrd4hxzk162k1mb0';
const ADMIN: AuthContext = { kind: 'admin', admin_key_id: 'adk_01m8a4vabhcrd4hxzk162k1ma9' };

class MemoryRequests implements Pick<UpgradeRequestRepository, keyof UpgradeRequestRepository> {
  rows: UpgradeRequestRow[] = [];
  async insert(row: UpgradeRequestRow) {
    // The database's one pending request per organization.
    if (this.rows.some((r) => r.org_id === row.org_id && r.status === 'pending')) return false;
    this.rows.push({ ...row });
    return true;
  }
  async findPending(orgId: string) {
    return this.rows.find((r) => r.org_id === orgId && r.status === 'pending');
  }
  async find(orgId: string, id: string) {
    const r = this.rows.find((x) => x.org_id === orgId && x.id === id);
    return r && { ...r };
  }
  async list(orgId: string, opts: { limit: number; before?: string | undefined }) {
    return this.rows.filter((r) => r.org_id === orgId && (!opts.before || r.id < opts.before)).sort((a, b) => b.id.localeCompare(a.id)).slice(0, opts.limit);
  }
  async listAll(opts: { limit: number; before?: string | undefined; status?: string | undefined; org_id?: string | undefined }) {
    return this.rows
      .filter((r) => (!opts.status || r.status === opts.status) && (!opts.org_id || r.org_id === opts.org_id) && (!opts.before || r.id < opts.before))
      .sort((a, b) => b.id.localeCompare(a.id))
      .slice(0, opts.limit);
  }
  async findForDecision(id: string) {
    const r = this.rows.find((x) => x.id === id);
    return r && { ...r };
  }
  lock = (orgId: string, id: string) => this.find(orgId, id);
  async decide(orgId: string, id: string, set: { status: UpgradeDecision; at: Date; note: string | null }) {
    const r = this.rows.find((x) => x.org_id === orgId && x.id === id && x.status === 'pending');
    if (r) Object.assign(r, { status: set.status, decided_at: set.at, decision_note: set.note });
    return r !== undefined;
  }
}

function setup() {
  const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
  const requests = new MemoryRequests();
  const plans = new Map<string, PlanName>([
    [ORG, 'free'],
    [OTHER_ORG, 'free'],
  ]);
  const orgs: Pick<OrganizationRepository, 'lockPlan' | 'setPlan'> = {
    lockPlan: async (orgId) => plans.get(orgId),
    setPlan: async (orgId, plan) => plans.has(orgId) && (plans.set(orgId, plan), true),
  };
  const members: MemberRow[] = [];
  const memberRepo: Pick<MemberRepository, 'findByUser'> = { findByUser: async (orgId, userId) => members.find((m) => m.org_id === orgId && m.user_id === userId) };
  // The stand-in stores ignore the transaction; rollback is the database's job (integration tests).
  const transact: Transact = (work) => work({} as OrgsTx);
  const audit = new MemoryAuditTrail();
  const upgrades = new UpgradeRequests(transact, requests, orgs, memberRepo, clock, audit);
  const person = (role: Role, org = ORG): Extract<AuthContext, { kind: 'user' }> => {
    const row: MemberRow = { id: newId('member'), org_id: org, user_id: newId('user'), role, created_at: clock.now() };
    members.push(row);
    return { kind: 'user', user_id: row.user_id, session_id: 'ses_1', org_id: org, env_id: 'env_1', role };
  };
  return { clock, requests, plans, members, upgrades, person, audit };
}

describe('the rules of a request', () => {
  it('refuses the current plan and a second pending request, each with a conflict naming why', () => {
    expect(requestRefusal('pro', 'pro', undefined)).toMatchObject({ code: 'conflict', message: 'the organization is on the pro plan already; ask for another plan' });
    expect(requestRefusal('free', 'pro', { id: 'upr_1', plan: 'enterprise' })).toMatchObject({ code: 'conflict', message: expect.stringMatching(/pending already \(upr_1, for the enterprise plan\)/) });
    expect(requestRefusal('free', 'pro', undefined)).toBeUndefined();
    expect(decisionRefusal({ status: 'approved' })?.message).toBe('this upgrade request was already approved');
    expect(decisionRefusal({ status: 'pending' })).toBeUndefined();
  });
});

describe('UpgradeRequests', () => {
  it('records who asked, for which plan, from which, and shows it to anyone who reads the organization', async () => {
    const { upgrades, person, clock } = setup();
    const owner = person('owner');
    const made = await upgrades.create(owner, { plan: 'pro', message: 'we need 50 inboxes' });
    expect(made).toEqual({
      id: expect.stringMatching(/^upr_[0-9a-z]{26}$/),
      org_id: ORG,
      plan: 'pro',
      current_plan: 'free',
      message: 'we need 50 inboxes',
      status: 'pending',
      requested_by: owner.user_id,
      created_at: clock.now().toISOString(),
      decided_at: null,
      decision_note: null,
    });
    const viewer = person('viewer');
    expect(await upgrades.get(viewer, made.id)).toEqual(made);
    expect(await upgrades.list(viewer, { limit: 10 })).toEqual({ data: [made], next_page_token: null });
  });

  it('lets owners and admins ask, and refuses members, viewers and API keys', async () => {
    const { upgrades, person } = setup();
    expect((await upgrades.create(person('admin'), { plan: 'enterprise' })).message).toBeNull();
    for (const role of ['member', 'viewer'] as const) expect((await refusalOf(upgrades.create(person(role), { plan: 'pro' }))).code).toBe('forbidden');
    const key: AuthContext = { kind: 'api_key', key_id: 'key_1', org_id: ORG, env_id: 'env_1', permissions: ['org.read'] };
    expect((await refusalOf(upgrades.create(key, { plan: 'pro' }))).code).toBe('forbidden');
    // The token says admin, the membership says member now: the membership wins.
    const demoted = person('member');
    expect((await refusalOf(upgrades.create({ ...demoted, role: 'admin' }, { plan: 'pro' }))).message).toMatch(/your role is member/);
  });

  it('keeps one pending request per organization, and refuses the plan the organization is on', async () => {
    const { upgrades, person, requests } = setup();
    const owner = person('owner');
    const first = await upgrades.create(owner, { plan: 'pro' });
    expect(await refusalOf(upgrades.create(owner, { plan: 'enterprise' }))).toMatchObject({ code: 'conflict', message: expect.stringContaining(first.id) });
    expect(await refusalOf(upgrades.create(owner, { plan: 'free' }))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/on the free plan already/) });
    // Another organization has its own.
    expect((await upgrades.create(person('owner', OTHER_ORG), { plan: 'pro' })).org_id).toBe(OTHER_ORG);
    // The other request's row arrived after this one looked: the index keeps one, and this one hears 409.
    const racing = setup();
    const racer = racing.person('owner');
    racing.requests.findPending = async () => undefined;
    await racing.upgrades.create(racer, { plan: 'pro' });
    expect(await refusalOf(racing.upgrades.create(racer, { plan: 'enterprise' }))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/being made at this moment/) });
    expect(requests.rows).toHaveLength(2);
  });

  it("answers another organization's request as not found, and pages newest first with a token only this list made", async () => {
    const { upgrades, person, requests } = setup();
    const owner = person('owner');
    const theirs = await upgrades.create(person('owner', OTHER_ORG), { plan: 'pro' });
    expect((await refusalOf(upgrades.get(owner, theirs.id))).code).toBe('not_found');
    // Three declined requests and one pending.
    const ids: string[] = [];
    for (const plan of ['pro', 'enterprise', 'pro', 'enterprise'] as const) {
      const made = await upgrades.create(owner, { plan });
      ids.push(made.id);
      if (ids.length < 4) await upgrades.decide(ADMIN, { id: made.id, decision: 'decline' });
    }
    // In id order, newest first (ids made in one millisecond are not in creation order).
    const newest = [...ids].sort().reverse();
    const first = await upgrades.list(owner, { limit: 3 });
    expect(first.data.map((r) => r.id)).toEqual(newest.slice(0, 3));
    const second = await upgrades.list(owner, { limit: 3, page_token: first.next_page_token! });
    expect(second).toEqual({ data: [expect.objectContaining({ id: newest[3] })], next_page_token: null });
    expect(await refusalOf(upgrades.list(owner, { limit: 3, page_token: 'bm90IG91cnM' }))).toMatchObject({ code: 'invalid_request', details: [{ path: 'page_token', message: 'not a token from this list' }] });
    expect(requests.rows.filter((r) => r.org_id === ORG)).toHaveLength(4);
  });
});

describe("a platform operator's decision", () => {
  it('approves: the organization is on the plan asked for, and the request says when and why', async () => {
    const { upgrades, person, plans, clock, audit } = setup();
    const made = await upgrades.create(person('owner'), { plan: 'pro' });
    clock.advance(60_000);
    const decided = await upgrades.decide(ADMIN, { id: made.id, decision: 'approve', note: 'welcome to pro' });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'upgrade_request.approved', actor: { type: 'admin_key', id: ADMIN.kind === 'admin' ? ADMIN.admin_key_id : '' }, org_id: ORG, target: { type: 'upgrade_request', id: made.id }, details: { plan: 'pro', note: 'welcome to pro' } }),
    ]);
    expect(decided).toEqual({ ...made, status: 'approved', decided_at: clock.now().toISOString(), decision_note: 'welcome to pro' });
    expect(plans.get(ORG)).toBe('pro');
    expect(await upgrades.get(person('viewer'), made.id)).toEqual(decided);
  });

  it('declines without changing the plan, and lets the organization ask again', async () => {
    const { upgrades, person, plans } = setup();
    const owner = person('owner');
    const made = await upgrades.create(owner, { plan: 'enterprise' });
    expect(await upgrades.decide(ADMIN, { id: made.id, decision: 'decline' })).toMatchObject({ status: 'declined', decision_note: null });
    expect(plans.get(ORG)).toBe('free');
    expect((await upgrades.create(owner, { plan: 'enterprise' })).status).toBe('pending');
  });

  it('decides once: a second decision is a conflict and changes nothing', async () => {
    const { upgrades, person, plans } = setup();
    const made = await upgrades.create(person('owner'), { plan: 'pro' });
    await upgrades.decide(ADMIN, { id: made.id, decision: 'decline' });
    expect(await refusalOf(upgrades.decide(ADMIN, { id: made.id, decision: 'approve' }))).toMatchObject({ code: 'conflict', message: 'this upgrade request was already declined' });
    expect(plans.get(ORG)).toBe('free');
  });

  it("lists every organization's requests for an operator, by status, and for nobody else", async () => {
    const { upgrades, person } = setup();
    const made = await upgrades.create(person('owner'), { plan: 'pro' });
    expect((await upgrades.listAll(ADMIN, { limit: 20, status: 'pending' })).data.map((r) => r.id)).toEqual([made.id]);
    expect((await upgrades.listAll(ADMIN, { limit: 20, status: 'approved' })).data).toEqual([]);
    expect((await upgrades.listAll(ADMIN, { limit: 20, org_id: newId('organization') })).data).toEqual([]);
    expect((await refusalOf(upgrades.listAll(person('owner'), { limit: 20 }))).code).toBe('forbidden');
  });

  it('is for admin contexts only, and an unknown request is not found', async () => {
    const { upgrades, person } = setup();
    const owner = person('owner');
    const made = await upgrades.create(owner, { plan: 'pro' });
    for (const who of [owner, { kind: 'service', service: 'gateway' } as const, { kind: 'anonymous' } as const]) {
      expect(await refusalOf(upgrades.decide(who, { id: made.id, decision: 'approve' }))).toMatchObject({ code: 'forbidden', message: 'this operation needs an admin key' });
    }
    expect((await refusalOf(upgrades.decide(ADMIN, { id: newId('upgradeRequest'), decision: 'approve' }))).code).toBe('not_found');
  });
});
