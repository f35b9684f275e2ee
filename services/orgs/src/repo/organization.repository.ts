/** Queries of organizations, environments and members. Every tenant read filters on org_id. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { OrganizationStatus, PlanName } from '@mailroom/contracts';
import type { EnvironmentTable, MemberTable, OrganizationTable, OrgsDb } from './tables';

export type OrganizationRow = Selectable<OrganizationTable> & { default_env_id: string };
export type EnvironmentRow = Selectable<EnvironmentTable>;
export type MembershipRow = Selectable<MemberTable> & { org_name: string; default_env_id: string };

export class OrganizationRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  async findById(orgId: string, ex: Executor<OrgsDb> = this.db): Promise<OrganizationRow | undefined> {
    return ex
      .selectFrom('organizations as o')
      .innerJoin('environments as e', (j) => j.onRef('e.org_id', '=', 'o.id').on('e.is_default', '=', true))
      .selectAll('o')
      .select('e.id as default_env_id')
      .where('o.id', '=', orgId)
      .executeTakeFirst();
  }

  async findBySignupUser(userId: string, ex: Executor<OrgsDb> = this.db): Promise<OrganizationRow | undefined> {
    return ex
      .selectFrom('organizations as o')
      .innerJoin('environments as e', (j) => j.onRef('e.org_id', '=', 'o.id').on('e.is_default', '=', true))
      .selectAll('o')
      .select('e.id as default_env_id')
      .where('o.signup_user_id', '=', userId)
      .executeTakeFirst();
  }

  /** false: the signup user already has the organization (a concurrent retry made it). */
  async insertOrganization(row: { id: string; name: string; signup_user_id: string | null; now: Date }, ex: Executor<OrgsDb>): Promise<boolean> {
    const result = await ex
      .insertInto('organizations')
      .values({ id: row.id, name: row.name, signup_user_id: row.signup_user_id, created_at: row.now, updated_at: row.now })
      .onConflict((oc) => oc.column('signup_user_id').doNothing())
      .executeTakeFirst();
    return result.numInsertedOrUpdatedRows === 1n;
  }

  async update(orgId: string, set: { name?: string | undefined; status?: OrganizationStatus | undefined; now: Date }, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('organizations')
      .set({ ...(set.name !== undefined ? { name: set.name } : {}), ...(set.status !== undefined ? { status: set.status } : {}), updated_at: set.now })
      .where('id', '=', orgId)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /**
   * The organization's plan, its row locked until the caller's transaction ends: what plans
   * limit (environments, members) is counted and added one creation at a time per
   * organization, and a change of plan waits for those under way. Undefined: no such organization.
   */
  async lockPlan(orgId: string, ex: Executor<OrgsDb>): Promise<PlanName | undefined> {
    const row = await ex.selectFrom('organizations').select('plan').where('id', '=', orgId).forNoKeyUpdate().executeTakeFirst();
    return row?.plan;
  }

  async setPlan(orgId: string, plan: PlanName, now: Date, ex: Executor<OrgsDb>): Promise<boolean> {
    const res = await ex.updateTable('organizations').set({ plan, updated_at: now }).where('id', '=', orgId).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async insertEnvironment(row: Omit<EnvironmentRow, 'created_at'> & { now: Date }, ex: Executor<OrgsDb>): Promise<void> {
    await ex
      .insertInto('environments')
      .values({ id: row.id, org_id: row.org_id, name: row.name, is_default: row.is_default, created_at: row.now })
      .execute();
  }

  async insertMember(row: Omit<Selectable<MemberTable>, 'created_at'> & { now: Date }, ex: Executor<OrgsDb>): Promise<void> {
    await ex
      .insertInto('members')
      .values({ id: row.id, org_id: row.org_id, user_id: row.user_id, role: row.role, created_at: row.now })
      .execute();
  }

  async findEnvironment(orgId: string, envId: string, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentRow | undefined> {
    return ex.selectFrom('environments').selectAll().where('org_id', '=', orgId).where('id', '=', envId).executeTakeFirst();
  }

  async membershipsOfUser(userId: string, ex: Executor<OrgsDb> = this.db): Promise<MembershipRow[]> {
    return ex
      .selectFrom('members as m')
      .innerJoin('organizations as o', 'o.id', 'm.org_id')
      .innerJoin('environments as e', (j) => j.onRef('e.org_id', '=', 'o.id').on('e.is_default', '=', true))
      .selectAll('m')
      .select(['o.name as org_name', 'e.id as default_env_id'])
      .where('m.user_id', '=', userId)
      .orderBy('m.created_at', 'asc')
      .orderBy('m.id', 'asc')
      .execute();
  }
}
