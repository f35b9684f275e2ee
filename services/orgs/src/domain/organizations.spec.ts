/**
 * Organizations without a database: the one a signup creates (idempotent, also when two
 * tries race), pausing and renaming, environments of another organization. The store is an
 * in-memory stand-in with the repository's semantics (one organization per signup user).
 */
import { DEFAULT_PLAN_LIMITS, type PlanName, type TenantContext } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { EnvironmentRow, MembershipRow, OrganizationRepository, OrganizationRow } from '../repo/organization.repository';
import type { OrgsTx } from '../repo/tables';
import { Organizations } from './organizations';
import type { Transact } from './ports';

type Org = Omit<OrganizationRow, 'default_env_id'>;

class MemoryOrgs implements Pick<OrganizationRepository, keyof OrganizationRepository> {
  readonly orgs = new Map<string, Org>();
  readonly envs = new Map<string, EnvironmentRow>();
  readonly members: { org_id: string; user_id: string; role: MembershipRow['role']; id: string; created_at: Date }[] = [];
  /** Runs once, between the first look and the insert: another try of the same signup wins the race. */
  beforeInsert: (() => Promise<void>) | undefined;

  private withEnv(o: Org | undefined): OrganizationRow | undefined {
    const env = o && [...this.envs.values()].find((e) => e.org_id === o.id && e.is_default);
    return o && env ? { ...o, default_env_id: env.id } : undefined;
  }
  async findById(orgId: string) {
    return this.withEnv(this.orgs.get(orgId));
  }
  async findBySignupUser(userId: string) {
    return this.withEnv([...this.orgs.values()].find((o) => o.signup_user_id === userId));
  }
  async insertOrganization(row: { id: string; name: string; signup_user_id: string | null; now: Date }): Promise<boolean> {
    const race = this.beforeInsert;
    this.beforeInsert = undefined;
    await race?.();
    if ([...this.orgs.values()].some((o) => o.signup_user_id === row.signup_user_id)) return false;
    this.orgs.set(row.id, { id: row.id, name: row.name, plan: 'free', status: 'active', signup_user_id: row.signup_user_id, created_at: row.now, updated_at: row.now });
    return true;
  }
  async update(orgId: string, set: { name?: string | undefined; status?: Org['status'] | undefined; now: Date }): Promise<boolean> {
    const o = this.orgs.get(orgId);
    if (!o) return false;
    Object.assign(o, { ...(set.name !== undefined ? { name: set.name } : {}), ...(set.status !== undefined ? { status: set.status } : {}), updated_at: set.now });
    return true;
  }
  async lockPlan(orgId: string) {
    return this.orgs.get(orgId)?.plan;
  }
  async setPlan(orgId: string, plan: PlanName, now: Date) {
    const o = this.orgs.get(orgId);
    if (o) Object.assign(o, { plan, updated_at: now });
    return o !== undefined;
  }
  async insertEnvironment(row: Omit<EnvironmentRow, 'created_at'> & { now: Date }): Promise<void> {
    this.envs.set(row.id, { id: row.id, org_id: row.org_id, name: row.name, is_default: row.is_default, created_at: row.now });
  }
  async insertMember(row: { id: string; org_id: string; user_id: string; role: MembershipRow['role']; now: Date }): Promise<void> {
    this.members.push({ id: row.id, org_id: row.org_id, user_id: row.user_id, role: row.role, created_at: row.now });
  }
  async findEnvironment(orgId: string, envId: string) {
    const e = this.envs.get(envId);
    return e?.org_id === orgId ? e : undefined;
  }
  async membershipsOfUser(userId: string): Promise<MembershipRow[]> {
    return this.members
      .filter((m) => m.user_id === userId)
      .map((m) => ({ ...m, org_name: this.orgs.get(m.org_id)!.name, default_env_id: [...this.envs.values()].find((e) => e.org_id === m.org_id && e.is_default)!.id }));
  }
}

function setup() {
  const repo = new MemoryOrgs();
  const clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
  // The stand-in store ignores the transaction it is handed; rollback is the database's job (integration tests).
  const transact: Transact = (work) => work({} as OrgsTx);
  return { repo, clock, orgs: new Organizations(transact, repo, DEFAULT_PLAN_LIMITS, clock) };
}


describe('Organizations', () => {
  it('gives a new user one organization, its production environment and the owner role', async () => {
    const { orgs, repo } = setup();
    const { organization, environment } = await orgs.createForOwner('usr_1', "Ada's organization");
    expect(organization).toMatchObject({ name: "Ada's organization", status: 'active', default_env_id: environment.id });
    expect(environment).toMatchObject({ org_id: organization.id, name: 'production', is_default: true });
    expect(await orgs.membershipsOf('usr_1')).toEqual([{ org_id: organization.id, org_name: "Ada's organization", role: 'owner', default_env_id: environment.id }]);
    expect(repo.members).toHaveLength(1);
  });

  it('answers a retried signup with the organization the first try made', async () => {
    const { orgs, repo } = setup();
    const first = await orgs.createForOwner('usr_1', 'A');
    expect(await orgs.createForOwner('usr_1', 'A')).toEqual(first);
    expect(repo.orgs.size).toBe(1);
  });

  it('answers the loser of a race with the winner organization, and adds nothing of its own', async () => {
    const { orgs, repo } = setup();
    let winner: Awaited<ReturnType<Organizations['createForOwner']>> | undefined;
    repo.beforeInsert = async () => {
      winner = await orgs.createForOwner('usr_1', 'A');
    };
    const loser = await orgs.createForOwner('usr_1', 'A');
    expect(loser).toEqual(winner);
    expect(repo.orgs.size).toBe(1);
    expect(repo.envs.size).toBe(1);
    expect(repo.members).toHaveLength(1);
  });

  it('pauses, resumes and renames the caller organization', async () => {
    const { orgs, clock } = setup();
    const { organization } = await orgs.createForOwner('usr_1', 'A');
    const owner: TenantContext = { kind: 'user', user_id: 'usr_1', session_id: 'ses_1', org_id: organization.id, env_id: organization.default_env_id, role: 'owner' };
    clock.advance(1_000);
    const paused = await orgs.update(owner, { status: 'paused' });
    expect(paused).toMatchObject({ status: 'paused', name: 'A', updated_at: clock.now().toISOString() });
    expect(await orgs.update(owner, { status: 'active', name: 'B' })).toMatchObject({ status: 'active', name: 'B' });
    await expect(orgs.update({ ...owner, org_id: 'org_gone' }, { name: 'C' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('finds an environment only in its own organization', async () => {
    const { orgs } = setup();
    const a = await orgs.createForOwner('usr_1', 'A');
    const b = await orgs.createForOwner('usr_2', 'B');
    expect(await orgs.environment(a.organization.id, a.environment.id)).toEqual(a.environment);
    await expect(orgs.environment(a.organization.id, b.environment.id)).rejects.toMatchObject({ status: 404 });
  });

  it("answers an organization's plan and limits from the table, with the table", async () => {
    const { orgs, repo, clock } = setup();
    const { organization } = await orgs.createForOwner('usr_1', 'A');
    expect(await orgs.limits(organization.id)).toEqual({ plan: 'free', limits: DEFAULT_PLAN_LIMITS.free, plans: DEFAULT_PLAN_LIMITS });
    await repo.setPlan(organization.id, 'pro', clock.now());
    expect(await orgs.limits(organization.id)).toMatchObject({ plan: 'pro', limits: DEFAULT_PLAN_LIMITS.pro });
    await expect(orgs.limits('org_01m8a4vabhcrd4hxzk162k1ma9')).rejects.toMatchObject({ code: 'not_found' });
  });
});
