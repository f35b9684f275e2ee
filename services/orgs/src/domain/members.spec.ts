/**
 * Members without a database: who may change whose role, who may remove or leave, what each
 * change announces, paging, another organization's ids. The store is an in-memory stand-in
 * with the repository's semantics (every query filters on org_id).
 */
import { newId, type AuthContext, type Fact, type Role } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import { Members, removalRefusal, roleChangeRefusal } from './members';
import type { MembershipFacts, Transact } from './ports';
import { MemoryAuditTrail, refusalOf } from '@mailroom/testing';

class MemoryMembers implements Pick<MemberRepository, keyof MemberRepository> {
  rows: MemberRow[] = [];
  async list(orgId: string, opts: { limit: number; after?: string | undefined }) {
    return this.rows
      .filter((r) => r.org_id === orgId && (!opts.after || r.id > opts.after))
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, opts.limit);
  }
  async find(orgId: string, id: string) {
    return this.rows.find((r) => r.org_id === orgId && r.id === id);
  }
  async count(orgId: string) {
    return this.rows.filter((r) => r.org_id === orgId).length;
  }
  async lockActorAndMember(orgId: string, actorUserId: string, id: string) {
    return this.rows.filter((r) => r.org_id === orgId && (r.user_id === actorUserId || r.id === id)).map((r) => ({ ...r }));
  }
  async findByUser(orgId: string, userId: string) {
    return this.rows.find((r) => r.org_id === orgId && r.user_id === userId);
  }
  async updateRole(orgId: string, id: string, role: Role) {
    const row = this.rows.find((r) => r.org_id === orgId && r.id === id);
    if (row) row.role = role;
    return row !== undefined;
  }
  async remove(orgId: string, id: string) {
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => !(r.org_id === orgId && r.id === id));
    return this.rows.length < before;
  }
}

const ORG = 'org_01m8a4vabhcrd4hxzk162k1ma9';
const OTHER_ORG = 'org_01m8a4vabhcrd4hxzk162k1mb0';

function setup() {
  const repo = new MemoryMembers();
  const clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
  const announced: Fact<'internal.orgs.member.changed'>[] = [];
  let kicks = 0;
  const facts: MembershipFacts = {
    changed: async (_tx, fact) => void announced.push(fact),
    kick: () => void kicks++,
  };
  // The stand-in store ignores the transaction; rollback is the database's job (integration tests).
  const transact: Transact = (work) => work({} as OrgsTx);
  const users = { profiles: async (ids: string[]) => ids.map((id) => ({ id, email: `${id}@example.com`, name: `Name of ${id}`, email_verified: true })) };
  const audit = new MemoryAuditTrail();
  const members = new Members(transact, repo, users, facts, clock, audit);
  const add = (role: Role, org = ORG) => {
    const row: MemberRow = { id: newId('member'), org_id: org, user_id: newId('user'), role, created_at: clock.now() };
    repo.rows.push(row);
    return row;
  };
  const as = (row: MemberRow): AuthContext => ({ kind: 'user', user_id: row.user_id, session_id: 'ses_1', org_id: row.org_id, env_id: 'env_1', role: row.role });
  return { repo, members, add, as, announced, audit, kicks: () => kicks };
}

describe('role changes', () => {
  const owner = { id: 'mem_o', role: 'owner' as const };
  const admin = { id: 'mem_a', role: 'admin' as const };
  const admin2 = { id: 'mem_a2', role: 'admin' as const };
  const member = { id: 'mem_m', role: 'member' as const };

  it('lets the owner and admins change other roles among admin, member and viewer', () => {
    expect(roleChangeRefusal(owner, member, 'admin')).toBeUndefined();
    expect(roleChangeRefusal(admin, member, 'viewer')).toBeUndefined();
    expect(roleChangeRefusal(admin, admin2, 'member')).toBeUndefined();
  });

  it('refuses members, your own role, the owner, and granting owner', () => {
    expect(roleChangeRefusal(member, admin, 'viewer')).toMatchObject({ code: 'forbidden' });
    expect(roleChangeRefusal(admin, admin, 'member')?.message).toMatch(/your own role/);
    expect(roleChangeRefusal(admin, owner, 'member')?.message).toMatch(/only by ownership transfer/);
    expect(roleChangeRefusal(owner, owner, 'admin')).toMatchObject({ code: 'forbidden' });
    expect(roleChangeRefusal(admin, member, 'owner')).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/admin cannot grant owner/) });
    expect(roleChangeRefusal(owner, member, 'owner')).toMatchObject({ code: 'conflict', message: expect.stringMatching(/exactly one owner/) });
  });

  it('refuses removing the owner or yourself, and removals by members', () => {
    expect(removalRefusal(admin, member)).toBeUndefined();
    expect(removalRefusal(admin, admin2)).toBeUndefined();
    expect(removalRefusal(admin, owner)?.message).toMatch(/owner cannot be removed/);
    expect(removalRefusal(admin, admin)?.message).toMatch(/leave/);
    expect(removalRefusal(member, { id: 'mem_v', role: 'viewer' })).toMatchObject({ code: 'forbidden' });
  });
});

describe('Members', () => {
  it('lists members oldest first, page by page, with their names and emails', async () => {
    const { members, add, as } = setup();
    const owner = add('owner');
    const rest = [add('admin'), add('member'), add('viewer')];
    add('owner', OTHER_ORG);
    // Ids sort in creation order (ULIDs; within one millisecond, in any order).
    const ids = [owner, ...rest].map((r) => r.id).sort();
    const first = await members.list(as(owner), { limit: 3 });
    expect(first.data.map((m) => m.id)).toEqual(ids.slice(0, 3));
    const second = await members.list(as(owner), { limit: 3, page_token: first.next_page_token! });
    expect(second).toMatchObject({ data: [{ id: ids[3] }], next_page_token: null });
    expect([...first.data, ...second.data].find((m) => m.id === owner.id)).toMatchObject({ role: 'owner', email: `${owner.user_id}@example.com`, name: `Name of ${owner.user_id}` });
    await expect(members.list(as(owner), { limit: 3, page_token: 'nonsense' })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it("answers another organization's member as not found, for reads and changes", async () => {
    const { members, add, as } = setup();
    const owner = add('owner');
    const stranger = add('member', OTHER_ORG);
    await expect(members.get(as(owner), stranger.id)).rejects.toMatchObject({ status: 404 });
    await expect(members.changeRole(as(owner), stranger.id, 'viewer')).rejects.toMatchObject({ status: 404 });
    await expect(members.remove(as(owner), stranger.id)).rejects.toMatchObject({ status: 404 });
    expect(stranger.role).toBe('member');
  });

  it('changes a role and announces it; the same role again changes and announces nothing', async () => {
    const { members, add, as, announced, kicks, audit } = setup();
    const admin = add('admin');
    const member = add('member');
    add('owner');
    expect(await members.changeRole(as(admin), member.id, 'viewer', { requestId: 'req_1', client: { ip: '203.0.113.9' } })).toMatchObject({ id: member.id, role: 'viewer' });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'member.role_changed', actor: { type: 'user', id: admin.user_id }, org_id: ORG, target: { type: 'member', id: member.id }, details: { user_id: member.user_id, from: 'member', to: 'viewer' }, request_id: 'req_1', ip: '203.0.113.9' }),
    ]);
    expect(announced).toEqual([{ org_id: ORG, user_id: member.user_id, member_id: member.id, role: 'viewer', changed_at: '2026-11-25T10:00:00.000Z' }]);
    expect(kicks()).toBe(1);
    await members.changeRole(as(admin), member.id, 'viewer');
    expect(announced).toHaveLength(1);
    expect(audit.entries).toHaveLength(1);
  });

  it("reads the actor's role again: a demoted admin whose token still says admin is refused", async () => {
    const { members, add, as } = setup();
    const admin = add('admin');
    const member = add('member');
    const stale = as(admin);
    admin.role = 'member';
    expect(await refusalOf(members.changeRole(stale, member.id, 'viewer'))).toMatchObject({ code: 'forbidden' });
    const gone = add('admin');
    const goneToken = as(gone);
    await members.remove(as(add('owner')), gone.id);
    expect((await refusalOf(members.remove(goneToken, member.id))).message).toMatch(/no longer a member/);
  });

  it('removes a member and announces it; refuses the owner', async () => {
    const { members, add, as, repo, announced, audit } = setup();
    const owner = add('owner');
    const admin = add('admin');
    const member = add('member');
    await members.remove(as(admin), member.id);
    expect(audit.entries.map((e) => [e.action, e.target.id, e.details])).toEqual([['member.removed', member.id, { user_id: member.user_id, role: 'member' }]]);
    expect(repo.rows.map((r) => r.id)).toEqual([owner.id, admin.id]);
    expect(announced).toEqual([expect.objectContaining({ member_id: member.id, role: null })]);
    expect(await refusalOf(members.remove(as(admin), owner.id))).toMatchObject({ code: 'forbidden' });
  });

  it('lets anyone but the owner leave', async () => {
    const { members, add, as, repo, announced } = setup();
    const owner = add('owner');
    const viewer = add('viewer');
    await members.leave(as(viewer));
    expect(repo.rows).toHaveLength(1);
    expect(announced).toEqual([expect.objectContaining({ user_id: viewer.user_id, role: null })]);
    expect(await refusalOf(members.leave(as(owner)))).toMatchObject({ code: 'conflict', message: expect.stringMatching(/transfer ownership/) });
    expect(await refusalOf(members.leave(as(viewer)))).toMatchObject({ status: 404 });
  });

  it('refuses API keys: people are managed by people', async () => {
    const { members, add } = setup();
    const member = add('member');
    const key: AuthContext = { kind: 'api_key', key_id: 'key_1', org_id: ORG, env_id: 'env_1', permissions: ['org.read'] };
    await expect(members.list(key, { limit: 10 })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(members.remove(key, member.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(members.leave(key)).rejects.toMatchObject({ code: 'forbidden' });
  });
});
