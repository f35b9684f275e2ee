/**
 * A person's deleted account in orgs, without a database: what they own, and their purge
 * (memberships removed with a fact each; an organization of theirs alone deleted with its
 * environments announced; one owned with others passed on). The store is an in-memory
 * stand-in with the repositories' semantics.
 */
import type { Fact } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { DepartureRepository } from '../repo/departure.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import { Departures, successor } from './departures';
import type { Transact } from './ports';

class MemoryOrgs implements Pick<DepartureRepository, keyof DepartureRepository>, Pick<MemberRepository, 'remove' | 'updateRole'> {
  readonly orgs = new Map<string, { name: string; envs: string[] }>();
  rows: MemberRow[] = [];
  private seq = 0;

  add(orgId: string, userId: string, role: MemberRow['role']): void {
    if (!this.orgs.has(orgId)) this.orgs.set(orgId, { name: orgId.replace('org_', ''), envs: [`env_${orgId}_prod`, `env_${orgId}_staging`] });
    this.rows.push({ id: `mem_${++this.seq}`, org_id: orgId, user_id: userId, role, created_at: new Date(Date.UTC(2026, 0, this.seq)) });
  }

  async ownedBy(userId: string) {
    return this.rows
      .filter((m) => m.user_id === userId && m.role === 'owner')
      .map((m) => ({ org_id: m.org_id, org_name: this.orgs.get(m.org_id)!.name, members: this.rows.filter((x) => x.org_id === m.org_id).length }));
  }
  async organizationsOf(userId: string) {
    return this.rows.filter((m) => m.user_id === userId).map((m) => m.org_id).sort();
  }
  async lockOrganization(orgId: string) {
    return this.orgs.has(orgId);
  }
  async members(orgId: string) {
    return this.rows.filter((m) => m.org_id === orgId);
  }
  async environmentIds(orgId: string) {
    return this.orgs.get(orgId)?.envs ?? [];
  }
  async deleteOrganization(orgId: string) {
    this.orgs.delete(orgId);
    this.rows = this.rows.filter((m) => m.org_id !== orgId);
  }
  async remove(orgId: string, memberId: string) {
    const before = this.rows.length;
    this.rows = this.rows.filter((m) => !(m.org_id === orgId && m.id === memberId));
    return this.rows.length < before;
  }
  async updateRole(orgId: string, memberId: string, role: MemberRow['role']) {
    const m = this.rows.find((x) => x.org_id === orgId && x.id === memberId);
    if (m) m.role = role;
    return m !== undefined;
  }
}

function setup() {
  const store = new MemoryOrgs();
  const clock = new ManualClock(new Date('2026-11-28T11:00:00.000Z'));
  const memberFacts: Fact<'internal.orgs.member.changed'>[] = [];
  const envFacts: Fact<'internal.orgs.environment.deleted'>[] = [];
  const transact: Transact = (work) => work({} as OrgsTx);
  const facts = { changed: async (_tx: OrgsTx, f: Fact<'internal.orgs.member.changed'>) => void memberFacts.push(f), kick: () => undefined };
  const environmentFacts = { deleted: async (_tx: OrgsTx, f: Fact<'internal.orgs.environment.deleted'>) => void envFacts.push(f), kick: () => undefined };
  return { store, clock, memberFacts, envFacts, departures: new Departures(transact, store, store, facts, environmentFacts, clock) };
}

describe('a person\'s departure', () => {
  it('tells which organizations they own and how many members each has', async () => {
    const { store, departures } = setup();
    store.add('org_solo', 'usr_ada', 'owner');
    store.add('org_team', 'usr_ada', 'owner');
    store.add('org_team', 'usr_bob', 'member');
    store.add('org_bobs', 'usr_bob', 'owner');
    store.add('org_bobs', 'usr_ada', 'admin');
    expect(await departures.owned('usr_ada')).toEqual([
      { org_id: 'org_solo', org_name: 'solo', members: 1 },
      { org_id: 'org_team', org_name: 'team', members: 2 },
    ]);
  });

  it('deletes the organizations they alone belonged to, environments announced, and leaves the others', async () => {
    const { store, departures, memberFacts, envFacts, clock } = setup();
    store.add('org_solo', 'usr_ada', 'owner');
    store.add('org_bobs', 'usr_bob', 'owner');
    store.add('org_bobs', 'usr_ada', 'member');
    expect(await departures.purge('usr_ada')).toEqual({ memberships_removed: 2, organizations_deleted: ['org_solo'], ownership_passed: [] });
    expect([...store.orgs.keys()]).toEqual(['org_bobs']);
    expect(store.rows.map((m) => [m.org_id, m.user_id, m.role])).toEqual([['org_bobs', 'usr_bob', 'owner']]);
    const at = clock.now().toISOString();
    expect(envFacts).toEqual([
      { org_id: 'org_solo', env_id: 'env_org_solo_prod', deleted_at: at },
      { org_id: 'org_solo', env_id: 'env_org_solo_staging', deleted_at: at },
    ]);
    expect(memberFacts.map((f) => [f.org_id, f.user_id, f.role])).toEqual([
      ['org_bobs', 'usr_ada', null],
      ['org_solo', 'usr_ada', null],
    ]);
    // Again: nothing left, nothing changes.
    expect(await departures.purge('usr_ada')).toEqual({ memberships_removed: 0, organizations_deleted: [], ownership_passed: [] });
    expect(memberFacts).toHaveLength(2);
  });

  it('passes an organization they owned with others to its longest-standing admin, else its longest-standing member', async () => {
    const { store, departures, memberFacts } = setup();
    store.add('org_team', 'usr_ada', 'owner');
    store.add('org_team', 'usr_bob', 'member');
    store.add('org_team', 'usr_cleo', 'admin');
    store.add('org_team', 'usr_dan', 'admin');
    expect(await departures.purge('usr_ada')).toEqual({ memberships_removed: 1, organizations_deleted: [], ownership_passed: ['org_team'] });
    expect(store.rows.map((m) => [m.user_id, m.role])).toEqual([
      ['usr_bob', 'member'],
      ['usr_cleo', 'owner'],
      ['usr_dan', 'admin'],
    ]);
    expect(memberFacts.map((f) => [f.user_id, f.role])).toEqual([
      ['usr_ada', null],
      ['usr_cleo', 'owner'],
    ]);
    const bob = store.rows[0]!;
    expect(successor([bob])).toBe(bob);
    expect(successor([])).toBeUndefined();
  });
});
