/**
 * Invitations without a database: who may invite, the token (random, stored hashed, sent by
 * mail only), replacement of a pending invitation, expiry with a moved clock, acceptance and
 * each of its refusals. The stores are in-memory stand-ins with the repositories' semantics.
 */
import { DEFAULT_PLAN_LIMITS, newId, type AuthContext, type Fact, type PlanName, type Role, type SystemMail } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { InvitationRepository, InvitationRow } from '../repo/invitation.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import { Invitations, acceptRefusal, hashInvitationToken } from './invitations';
import type { Transact } from './ports';
import { PlanGuard } from './plan-guard';
import { refusalOf } from '@mailroom/testing';

const ORG = 'org_01m8a4vabhcrd4hxzk162k1ma9';
const OTHER_ORG = 'org_01m8a4vabhcrd4hxzk162k1mb0';
const DAY = 86_400_000;

class MemoryStore implements Pick<InvitationRepository, keyof InvitationRepository> {
  members: MemberRow[] = [];
  invitations: InvitationRow[] = [];
  async insert(row: InvitationRow) {
    // The database's one pending invitation per address.
    if (this.invitations.some((r) => r.org_id === row.org_id && r.email === row.email && r.status === 'pending')) return false;
    this.invitations.push({ ...row });
    return true;
  }
  async countPending(orgId: string, now: Date) {
    return this.invitations.filter((r) => r.org_id === orgId && r.status === 'pending' && r.expires_at > now).length;
  }
  async list(orgId: string, opts: { limit: number; before?: string | undefined }) {
    return this.invitations.filter((r) => r.org_id === orgId && (!opts.before || r.id < opts.before)).sort((a, b) => b.id.localeCompare(a.id)).slice(0, opts.limit);
  }
  async lockPendingFor(orgId: string, email: string) {
    return this.invitations.find((r) => r.org_id === orgId && r.email === email && r.status === 'pending');
  }
  async lock(orgId: string, id: string) {
    const r = this.invitations.find((x) => x.org_id === orgId && x.id === id);
    return r && { ...r };
  }
  async lockByTokenHash(hash: string) {
    const r = this.invitations.find((x) => x.token_hash === hash);
    return r && { ...r };
  }
  async decide(orgId: string, id: string, set: { status: 'accepted' | 'revoked'; at: Date; member_id?: string }) {
    const r = this.invitations.find((x) => x.org_id === orgId && x.id === id && x.status === 'pending');
    if (r) Object.assign(r, { status: set.status, decided_at: set.at, member_id: set.member_id ?? null });
    return r !== undefined;
  }
  async findByUser(orgId: string, userId: string) {
    return this.members.find((r) => r.org_id === orgId && r.user_id === userId);
  }
}

class MemberList implements Pick<MemberRepository, 'findByUser' | 'list' | 'count'> {
  constructor(private readonly store: MemoryStore) {}
  async count(orgId: string) {
    return this.store.members.filter((r) => r.org_id === orgId).length;
  }
  async list(orgId: string, opts: { limit: number; after?: string | undefined }) {
    return this.store.members.filter((r) => r.org_id === orgId && (!opts.after || r.id > opts.after)).sort((a, b) => a.id.localeCompare(b.id)).slice(0, opts.limit);
  }
  findByUser = (orgId: string, userId: string) => this.store.findByUser(orgId, userId);
}

function setup() {
  const store = new MemoryStore();
  const clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
  const announced: Fact<'internal.orgs.member.changed'>[] = [];
  const mails: SystemMail[] = [];
  const emails = new Map<string, string>();
  const transact: Transact = (work) => work({} as OrgsTx);
  // Each organization's plan (enterprise unless a test says otherwise: no limit), against the default table.
  const plans = new Map<string, PlanName>();
  const unverified = new Set<string>();
  const users = { profiles: async (ids: string[]) => ids.filter((id) => emails.has(id)).map((id) => ({ id, email: emails.get(id)!, name: null, email_verified: !unverified.has(id) })) };
  const invitations = new Invitations(
    transact,
    store,
    new MemberList(store),
    async (_tx, m) => void store.members.push({ id: m.id, org_id: m.org_id, user_id: m.user_id, role: m.role, created_at: m.now }),
    users,
    async () => 'Acme',
    { changed: async (_tx, fact) => void announced.push(fact), kick: () => undefined },
    { queue: async (_tx, mail) => void mails.push(mail) },
    new PlanGuard(DEFAULT_PLAN_LIMITS, async (orgId) => plans.get(orgId) ?? 'enterprise'),
    clock,
  );
  const person = (email: string) => {
    const id = newId('user');
    emails.set(id, email);
    return id;
  };
  const add = (role: Role, email = `${Math.random().toString(36).slice(2)}@example.com`, org = ORG) => {
    const row: MemberRow = { id: newId('member'), org_id: org, user_id: person(email), role, created_at: clock.now() };
    store.members.push(row);
    return row;
  };
  const as = (userId: string, role: Role = 'owner', org = ORG): AuthContext => ({ kind: 'user', user_id: userId, session_id: 'ses_1', org_id: org, env_id: 'env_1', role });
  const tokenOf = (mail: SystemMail | undefined) => (mail?.template === 'invitation' ? mail.data.token : '');
  return { store, clock, invitations, add, person, as, announced, mails, tokenOf, plans, unverified };
}

describe('Invitations', () => {
  it('invites by email: the token goes by mail only and is stored as its hash', async () => {
    const { invitations, add, as, mails, store, tokenOf } = setup();
    const owner = add('owner');
    const made = await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    expect(made).toMatchObject({ email: 'bob@example.com', role: 'member', status: 'pending', invited_by_user_id: owner.user_id });
    expect(JSON.stringify(made)).not.toMatch(/mri_/);
    expect(new Date(made.expires_at).getTime() - new Date(made.created_at).getTime()).toBe(7 * DAY);
    expect(mails).toEqual([expect.objectContaining({ to: 'bob@example.com', template: 'invitation', data: expect.objectContaining({ org_name: 'Acme', role: 'member' }) })]);
    const token = tokenOf(mails[0]);
    expect(token).toMatch(/^mri_[A-Za-z0-9_-]{43}$/);
    expect(store.invitations[0]!.token_hash).toBe(hashInvitationToken(token));
    expect(JSON.stringify(store.invitations)).not.toContain(token);
  });

  it('refuses viewers and members, and inviting a member', async () => {
    const { invitations, add, as } = setup();
    add('owner');
    const member = add('member');
    add('viewer', 'taken@example.com');
    expect((await refusalOf(invitations.create(as(member.user_id, 'member'), { email: 'x@example.com', role: 'viewer' }))).code).toBe('forbidden');
    // The token's role says admin, the membership says member now: the membership wins.
    expect((await refusalOf(invitations.create(as(member.user_id, 'admin'), { email: 'x@example.com', role: 'viewer' }))).code).toBe('forbidden');
    expect(await refusalOf(invitations.create(as(add('admin').user_id, 'admin'), { email: 'taken@example.com', role: 'admin' }))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/member of this organization already/) });
  });

  it('refuses an inviter whose address is not verified yet, and lets them once it is', async () => {
    const { invitations, add, as, mails, unverified } = setup();
    const owner = add('owner');
    unverified.add(owner.user_id);
    expect(await refusalOf(invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' }))).toMatchObject({ code: 'email_unverified', message: expect.stringMatching(/verify your email address/) });
    expect(mails).toEqual([]);
    unverified.delete(owner.user_id);
    expect(await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' })).toMatchObject({ status: 'pending' });
  });

  it('answers 409, not a failure, when another invitation of the same new address is made at the same moment', async () => {
    const { invitations, store, add, as } = setup();
    const owner = add('owner');
    await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    // The other request's row arrived after this one looked for a pending invitation.
    store.lockPendingFor = async () => undefined;
    expect(await refusalOf(invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'admin' }))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/being made at this moment/) });
    expect(store.invitations).toHaveLength(1);
  });

  it('replaces a pending invitation of the same address: the old token stops working', async () => {
    const { invitations, add, as, person, mails, tokenOf } = setup();
    const owner = add('owner');
    const first = await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    const second = await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'admin' });
    expect(second.id).not.toBe(first.id);
    const listed = await invitations.list(as(owner.user_id), { limit: 10 });
    // Ids made in one millisecond are in no particular order: compare without it.
    expect(new Map(listed.data.map((i) => [i.id, i.status]))).toEqual(
      new Map([
        [second.id, 'pending'],
        [first.id, 'revoked'],
      ]),
    );
    const bob = person('bob@example.com');
    expect((await refusalOf(invitations.accept(as(bob, 'owner', OTHER_ORG), tokenOf(mails[0])))).message).toMatch(/revoked/);
    expect(await invitations.accept(as(bob, 'owner', OTHER_ORG), tokenOf(mails[1]))).toMatchObject({ org_id: ORG, role: 'admin' });
  });

  it('adds the membership on acceptance, once, and announces it', async () => {
    const { invitations, add, as, person, mails, tokenOf, store, announced } = setup();
    const owner = add('owner');
    await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'viewer' });
    const token = tokenOf(mails[0]);
    const stranger = person('eve@example.com');
    expect(await refusalOf(invitations.accept(as(stranger, 'owner', OTHER_ORG), token))).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/another email address/) });
    const bob = person('BOB@example.com');
    const accepted = await invitations.accept(as(bob, 'owner', OTHER_ORG), token);
    expect(accepted).toMatchObject({ org_id: ORG, role: 'viewer', member_id: expect.stringMatching(/^mem_/) });
    expect(store.members.find((m) => m.user_id === bob)).toMatchObject({ org_id: ORG, role: 'viewer' });
    expect(announced).toEqual([expect.objectContaining({ org_id: ORG, user_id: bob, role: 'viewer' })]);
    expect(await refusalOf(invitations.accept(as(bob, 'owner', OTHER_ORG), token))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already used/) });
    expect((await refusalOf(invitations.accept(as(bob), `mri_${'B'.repeat(43)}`))).code).toBe('not_found');
  });

  it('expires after 7 days', async () => {
    const { invitations, add, as, person, mails, tokenOf, clock } = setup();
    const owner = add('owner');
    await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    clock.advance(7 * DAY);
    expect((await invitations.list(as(owner.user_id), { limit: 10 })).data[0]?.status).toBe('expired');
    expect(await refusalOf(invitations.accept(as(person('bob@example.com'), 'owner', OTHER_ORG), tokenOf(mails[0])))).toMatchObject({ code: 'expired', status: 410 });
  });

  it("revokes, and answers another organization's invitation with 404", async () => {
    const { invitations, add, as } = setup();
    const owner = add('owner');
    const made = await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    const other = add('owner', 'o@example.com', OTHER_ORG);
    expect((await refusalOf(invitations.revoke(as(other.user_id, 'owner', OTHER_ORG), made.id))).code).toBe('not_found');
    await invitations.revoke(as(owner.user_id), made.id);
    expect((await refusalOf(invitations.revoke(as(owner.user_id), made.id))).code).toBe('conflict');
  });

  it('counts pending invitations with the members under the plan: the one too many is refused, a resend and an expired one free their place', async () => {
    const { invitations, add, as, plans, clock, store } = setup();
    plans.set(ORG, 'free');
    const owner = add('owner');
    add('member', 'm@example.com', OTHER_ORG);
    await invitations.create(as(owner.user_id), { email: 'a@example.com', role: 'member' });
    await invitations.create(as(owner.user_id), { email: 'b@example.com', role: 'member' });
    // The owner and two pending invitations fill the free plan's 3.
    expect(await refusalOf(invitations.create(as(owner.user_id), { email: 'c@example.com', role: 'member' }))).toMatchObject({
      code: 'plan_limit',
      message: 'the free plan allows 3 members (pending invitations included); the pro plan allows 50: ask for it with POST /api/v1/org/upgrade-request',
    });
    // A resend replaces an invitation: it takes the place it frees.
    expect((await invitations.create(as(owner.user_id), { email: 'b@example.com', role: 'admin' })).role).toBe('admin');
    // An expired invitation holds no place.
    clock.advance(7 * 86_400_000);
    expect((await invitations.create(as(owner.user_id), { email: 'c@example.com', role: 'member' })).status).toBe('pending');
    expect(store.invitations.filter((i) => i.email === 'c@example.com')).toHaveLength(1);
  });

  it('refuses an acceptance once the members alone fill the plan', async () => {
    const { invitations, add, as, person, plans, mails, tokenOf } = setup();
    const owner = add('owner');
    await invitations.create(as(owner.user_id), { email: 'bob@example.com', role: 'member' });
    // Members joined meanwhile (or the plan changed): three of them fill the free plan.
    add('member');
    add('viewer');
    plans.set(ORG, 'free');
    const bob = person('bob@example.com');
    expect(await refusalOf(invitations.accept(as(bob, 'owner', OTHER_ORG), tokenOf(mails[0])))).toMatchObject({ code: 'plan_limit', status: 403 });
    plans.set(ORG, 'pro');
    expect(await invitations.accept(as(bob, 'owner', OTHER_ORG), tokenOf(mails[0]))).toMatchObject({ org_id: ORG, role: 'member' });
  });

  it('decides acceptance on the invitation as it stands', () => {
    const now = new Date('2026-11-25T10:00:00.000Z');
    const row: InvitationRow = {
      id: 'inv_1', org_id: ORG, email: 'a@example.com', role: 'member', token_hash: 'h', status: 'pending',
      invited_by_user_id: 'usr_1', created_at: now, expires_at: new Date(now.getTime() + DAY), decided_at: null, member_id: null,
    };
    expect(acceptRefusal(row, now)).toBeUndefined();
    expect(acceptRefusal({ ...row, status: 'accepted' }, now)?.code).toBe('conflict');
    expect(acceptRefusal({ ...row, status: 'revoked' }, now)?.code).toBe('conflict');
    expect(acceptRefusal(row, new Date(now.getTime() + DAY))?.code).toBe('expired');
  });
});
