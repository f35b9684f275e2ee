/**
 * Ownership transfer without a database: who may ask, accept and cancel, one pending request,
 * expiry with a moved clock, what acceptance changes and announces, the mails of each step.
 * The stores are in-memory stand-ins with the repositories' semantics (filters on org_id).
 */
import { newId, type AuthContext, type Fact, type Role, type SystemMail } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { DecidedStatus, OwnershipTransferRepository, OwnershipTransferRow } from '../repo/ownership-transfer.repository';
import type { OrgsTx } from '../repo/tables';
import { OwnershipTransfers, decisionRefusal, transferRefusal } from './ownership-transfers';
import type { Transact } from './ports';
import { MemoryAuditTrail, refusalOf } from '@mailroom/testing';

const ORG = 'org_01m8a4vabhcrd4hxzk162k1ma9';
const OTHER_ORG = 'org_01m8a4vabhcrd4hxzk162k1mb0';
const DAY = 86_400_000;

class MemoryStore implements Pick<OwnershipTransferRepository, keyof OwnershipTransferRepository>, Pick<MemberRepository, 'lockActorAndMember' | 'findByUser' | 'updateRole'> {
  members: MemberRow[] = [];
  transfers: OwnershipTransferRow[] = [];
  async insert(row: OwnershipTransferRow) {
    if (row.status === 'pending' && this.transfers.some((t) => t.org_id === row.org_id && t.status === 'pending')) throw new Error('unique violation');
    this.transfers.push({ ...row });
  }
  async findPending(orgId: string) {
    return this.transfers.find((t) => t.org_id === orgId && t.status === 'pending');
  }
  async lock(orgId: string, id: string) {
    const t = this.transfers.find((x) => x.org_id === orgId && x.id === id);
    return t && { ...t };
  }
  async decide(orgId: string, id: string, status: DecidedStatus, at: Date) {
    const t = this.transfers.find((x) => x.org_id === orgId && x.id === id && x.status === 'pending');
    if (t) Object.assign(t, { status, decided_at: at });
    return t !== undefined;
  }
  async lockActorAndMember(orgId: string, actorUserId: string, id: string) {
    return this.members.filter((r) => r.org_id === orgId && (r.user_id === actorUserId || r.id === id)).map((r) => ({ ...r }));
  }
  async findByUser(orgId: string, userId: string) {
    return this.members.find((r) => r.org_id === orgId && r.user_id === userId);
  }
  async updateRole(orgId: string, id: string, role: Role) {
    if (role === 'owner' && this.members.some((r) => r.org_id === orgId && r.role === 'owner')) throw new Error('members_one_owner');
    const row = this.members.find((r) => r.org_id === orgId && r.id === id);
    if (row) row.role = role;
    return row !== undefined;
  }
}

function setup() {
  const store = new MemoryStore();
  const clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
  const announced: Fact<'internal.orgs.member.changed'>[] = [];
  const mails: SystemMail[] = [];
  const transact: Transact = (work) => work({} as OrgsTx);
  const users = { profiles: async (ids: string[]) => ids.map((id) => ({ id, email: `${id}@example.com`, name: null, email_verified: true })) };
  const audit = new MemoryAuditTrail();
  const transfers = new OwnershipTransfers(
    transact,
    store,
    store,
    users,
    async () => 'Acme',
    { changed: async (_tx, fact) => void announced.push(fact), kick: () => undefined },
    { queue: async (_tx, mail) => void mails.push(mail) },
    clock,
    audit,
  );
  const add = (role: Role, org = ORG) => {
    const row: MemberRow = { id: newId('member'), org_id: org, user_id: newId('user'), role, created_at: clock.now() };
    store.members.push(row);
    return row;
  };
  const as = (row: MemberRow): AuthContext => ({ kind: 'user', user_id: row.user_id, session_id: 'ses_1', org_id: row.org_id, env_id: 'env_1', role: row.role });
  return { store, clock, transfers, add, as, announced, mails, audit };
}

describe('transfer rules', () => {
  it('lets only the owner ask, and not themselves', () => {
    expect(transferRefusal({ id: 'mem_o', role: 'owner' }, { id: 'mem_a' })).toBeUndefined();
    expect(transferRefusal({ id: 'mem_a', role: 'admin' }, { id: 'mem_m' })).toMatchObject({ code: 'forbidden' });
    expect(transferRefusal({ id: 'mem_o', role: 'owner' }, { id: 'mem_o' })).toMatchObject({ code: 'invalid_request' });
  });
});

describe('OwnershipTransfers', () => {
  it('makes one pending request that expires in 7 days, and tells both parties', async () => {
    const { transfers, add, as, mails, clock } = setup();
    const owner = add('owner');
    const admin = add('admin');
    const made = await transfers.create(as(owner), admin.id);
    expect(made).toMatchObject({ status: 'pending', from_member_id: owner.id, to_member_id: admin.id, to_user_id: admin.user_id, decided_at: null });
    expect(new Date(made.expires_at).getTime() - clock.now().getTime()).toBe(7 * DAY);
    expect(mails.map((m) => [m.template, m.to])).toEqual([
      ['ownership_transfer.requested', `${owner.user_id}@example.com`],
      ['ownership_transfer.requested', `${admin.user_id}@example.com`],
    ]);
    expect(mails[1]).toMatchObject({ data: { org_name: 'Acme', recipient: 'new_owner', transfer_id: made.id } });
    expect((await transfers.pending(as(admin))).data).toEqual([made]);
    const second = await refusalOf(transfers.create(as(owner), add('member').id));
    expect(second).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already pending/) });
  });

  it('refuses non-owners, yourself, and members of other organizations or none', async () => {
    const { transfers, add, as } = setup();
    const owner = add('owner');
    const admin = add('admin');
    expect((await refusalOf(transfers.create(as(admin), owner.id))).code).toBe('forbidden');
    expect((await refusalOf(transfers.create(as(owner), owner.id))).code).toBe('invalid_request');
    expect((await refusalOf(transfers.create(as(owner), add('member', OTHER_ORG).id))).code).toBe('not_found');
    expect((await refusalOf(transfers.create(as(owner), newId('member')))).code).toBe('not_found');
  });

  it('on acceptance makes the owner admin and the target owner, announcing both', async () => {
    const { transfers, add, as, announced, mails, store, audit } = setup();
    const owner = add('owner');
    const member = add('member');
    const made = await transfers.create(as(owner), member.id);
    expect((await refusalOf(transfers.accept(as(owner), made.id))).code).toBe('forbidden');
    const accepted = await transfers.accept(as(member), made.id);
    expect(accepted).toMatchObject({ status: 'accepted', decided_at: expect.any(String) });
    expect(store.members.find((m) => m.id === owner.id)?.role).toBe('admin');
    expect(store.members.find((m) => m.id === member.id)?.role).toBe('owner');
    expect(announced.map((f) => [f.member_id, f.role])).toEqual([
      [owner.id, 'admin'],
      [member.id, 'owner'],
    ]);
    expect(mails.slice(2).map((m) => m.template)).toEqual(['ownership_transfer.accepted', 'ownership_transfer.accepted']);
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'ownership.transferred', actor: { type: 'user', id: member.user_id }, target: { type: 'organization', id: owner.org_id }, details: { transfer_id: made.id, from_user_id: owner.user_id, to_user_id: member.user_id } }),
    ]);
    expect(await refusalOf(transfers.accept(as(member), made.id))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already accepted/) });
    expect(await refusalOf(transfers.cancel(as({ ...member, role: 'owner' }), made.id))).toMatchObject({ code: 'conflict' });
    expect((await transfers.pending(as(member))).data).toEqual([]);
  });

  it('lets the owner cancel; a cancelled request cannot be accepted', async () => {
    const { transfers, add, as, mails } = setup();
    const owner = add('owner');
    const admin = add('admin');
    const made = await transfers.create(as(owner), admin.id);
    expect((await refusalOf(transfers.cancel(as(admin), made.id))).code).toBe('forbidden');
    expect(await transfers.cancel(as(owner), made.id)).toMatchObject({ status: 'cancelled' });
    expect(mails.slice(2).map((m) => m.template)).toEqual(['ownership_transfer.cancelled', 'ownership_transfer.cancelled']);
    expect(await refusalOf(transfers.accept(as(admin), made.id))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already cancelled/) });
    // Another may be asked now.
    expect(await transfers.create(as(owner), admin.id)).toMatchObject({ status: 'pending' });
  });

  it('expires a request after 7 days: it can be neither accepted nor cancelled, and a new one may be made', async () => {
    const { transfers, add, as, clock, store } = setup();
    const owner = add('owner');
    const admin = add('admin');
    const made = await transfers.create(as(owner), admin.id);
    clock.advance(7 * DAY - 1);
    expect((await transfers.pending(as(owner))).data).toHaveLength(1);
    clock.advance(1);
    expect((await transfers.pending(as(owner))).data).toEqual([]);
    expect(await refusalOf(transfers.accept(as(admin), made.id))).toMatchObject({ code: 'expired', status: 410 });
    expect(await refusalOf(transfers.cancel(as(owner), made.id))).toMatchObject({ code: 'expired' });
    expect(store.members.find((m) => m.id === admin.id)?.role).toBe('admin');
    const next = await transfers.create(as(owner), admin.id);
    expect(next.id).not.toBe(made.id);
    expect(store.transfers.find((t) => t.id === made.id)?.status).toBe('expired');
  });

  it("answers another organization's request with 404", async () => {
    const { transfers, add, as } = setup();
    const owner = add('owner');
    const made = await transfers.create(as(owner), add('admin').id);
    const stranger = add('owner', OTHER_ORG);
    expect((await refusalOf(transfers.accept(as(stranger), made.id))).code).toBe('not_found');
    expect((await refusalOf(transfers.cancel(as(stranger), made.id))).code).toBe('not_found');
  });

  it('decides only pending requests that have not expired', () => {
    const now = new Date('2026-11-25T10:00:00.000Z');
    const row: OwnershipTransferRow = {
      id: 'otr_1', org_id: ORG, from_member_id: 'mem_o', from_user_id: 'usr_o', to_member_id: 'mem_a', to_user_id: 'usr_a',
      status: 'pending', created_at: now, expires_at: new Date(now.getTime() + DAY), decided_at: null,
    };
    expect(decisionRefusal(row, now)).toBeUndefined();
    expect(decisionRefusal({ ...row, status: 'cancelled' }, now)?.code).toBe('conflict');
    expect(decisionRefusal(row, new Date(now.getTime() + DAY))?.code).toBe('expired');
  });
});
