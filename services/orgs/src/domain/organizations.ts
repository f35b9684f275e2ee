/** Organizations, their environments and memberships. */
import { AppError, newId, type Environment, type Membership, type Organization, type OrganizationLimits, type OrganizationStatus, type PlanTable, type TenantContext } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { OrganizationRepository, OrganizationRow, EnvironmentRow } from '../repo/organization.repository';
import type { Transact } from './ports';

export const DEFAULT_ENVIRONMENT_NAME = 'production';

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    status: row.status,
    default_env_id: row.default_env_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toEnvironment(row: EnvironmentRow): Environment {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    is_default: row.is_default,
    created_at: row.created_at.toISOString(),
  };
}

export class Organizations {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<OrganizationRepository, keyof OrganizationRepository>,
    /** Every plan's limits (config.plans: the defaults under PLAN_<NAME>_LIMITS). */
    private readonly plans: PlanTable,
    private readonly clock: Clock,
  ) {}

  /**
   * The organization a new user owns, with its default environment. Idempotent per user:
   * a retried signup gets the organization the first attempt created.
   */
  async createForOwner(ownerUserId: string, name: string): Promise<{ organization: Organization; environment: Environment }> {
    const existing = await this.repo.findBySignupUser(ownerUserId);
    if (existing) return this.withDefaultEnvironment(existing);
    const now = this.clock.now();
    const orgId = newId('organization');
    await this.transact(async (trx) => {
      // A concurrent retry won the race: answer with its organization.
      if (!(await this.repo.insertOrganization({ id: orgId, name, signup_user_id: ownerUserId, now }, trx))) return;
      await this.repo.insertEnvironment({ id: newId('environment'), org_id: orgId, name: DEFAULT_ENVIRONMENT_NAME, is_default: true, now }, trx);
      await this.repo.insertMember({ id: newId('member'), org_id: orgId, user_id: ownerUserId, role: 'owner', now }, trx);
    });
    const created = await this.repo.findBySignupUser(ownerUserId);
    if (!created) throw new AppError('internal_error', 'organization vanished after creation');
    return this.withDefaultEnvironment(created);
  }

  private async withDefaultEnvironment(org: OrganizationRow) {
    const env = await this.repo.findEnvironment(org.id, org.default_env_id);
    if (!env) throw new AppError('internal_error', 'organization has no default environment');
    return { organization: toOrganization(org), environment: toEnvironment(env) };
  }

  async get(orgId: string): Promise<Organization> {
    const row = await this.repo.findById(orgId);
    if (!row) throw AppError.notFound('organization');
    return toOrganization(row);
  }

  /** Renames, pauses or resumes the caller's organization (permission `org.manage`, checked by the caller). */
  async update(auth: TenantContext, req: { name?: string | undefined; status?: OrganizationStatus | undefined }): Promise<Organization> {
    if (!(await this.repo.update(auth.org_id, { ...req, now: this.clock.now() }))) throw AppError.notFound('organization');
    return this.get(auth.org_id);
  }

  /** For the services that create what plans limit: the organization's plan and limits, and the table (to name the plan that lifts one). */
  async limits(orgId: string): Promise<OrganizationLimits> {
    const row = await this.repo.findById(orgId);
    if (!row) throw AppError.notFound('organization');
    return { plan: row.plan, limits: this.plans[row.plan], plans: this.plans };
  }

  async environment(orgId: string, envId: string): Promise<Environment> {
    const row = await this.repo.findEnvironment(orgId, envId);
    if (!row) throw AppError.notFound('environment');
    return toEnvironment(row);
  }

  async membershipsOf(userId: string): Promise<Membership[]> {
    const rows = await this.repo.membershipsOfUser(userId);
    return rows.map((r) => ({ org_id: r.org_id, org_name: r.org_name, role: r.role, default_env_id: r.default_env_id }));
  }
}
