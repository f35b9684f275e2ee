/**
 * Environments of an organization and who may act in them. The rules:
 * - owners and admins (environments.manage) create, rename and delete environments and give
 *   members one or take it away; they see and act in every environment;
 * - members and viewers see the default environment and those they were given; any other
 *   environment (or another organization's) answers 404, never 403;
 * - the default environment is every member's: nobody is added to or removed from it, and it
 *   is never deleted; an environment is deleted only once it holds no inbox, API key or
 *   webhook endpoint (asked of the services that own them);
 * - names are unique per organization; the organization's plan limits how many it has (the
 *   default one included), counted with the organization locked (PlanGuard);
 * - giving or taking an environment, and deleting one, are facts on ORGS_FACTS written with
 *   the change, so gateways stop a person acting in an environment within a second.
 */
import {
  AppError,
  authorize,
  pageCursor,
  encodePageToken,
  idSchema,
  newId,
  ROLE_PERMISSIONS,
  type AuthContext,
  type Environment,
  type EnvironmentMember,
  type Role,
  type TenantContext,
  type UserProfile,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { EnvironmentRepository, EnvironmentRow } from '../repo/environment.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { EnvironmentContents, EnvironmentFacts, Transact, UsersPort } from './ports';
import type { PlanGuard } from './plan-guard';
import { toEnvironment } from './organizations';

const envCursor = z.object({ after: idSchema('environment') });
const memberCursor = z.object({ after: idSchema('member') });

/** Owners and admins act in every environment of their organization. */
export function seesEveryEnvironment(role: Role): boolean {
  return ROLE_PERMISSIONS[role].includes('environments.manage');
}

/** Whether a person with `role` may see and act in `env`, given whether they were given it. */
export function maySeeEnvironment(role: Role, env: Pick<EnvironmentRow, 'is_default'>, isMember: boolean): boolean {
  return seesEveryEnvironment(role) || env.is_default || isMember;
}

/** Why `env` may not be deleted; undefined when it may. */
export function deletionRefusal(env: Pick<EnvironmentRow, 'is_default' | 'name'>, contents: { inboxes: number; api_keys: number; webhook_endpoints: number; domains: number }): AppError | undefined {
  if (env.is_default) return new AppError('conflict', `"${env.name}" is the organization's default environment; it cannot be deleted`);
  const held = [
    contents.inboxes > 0 ? `${contents.inboxes} inbox(es)` : undefined,
    contents.api_keys > 0 ? `${contents.api_keys} API key(s)` : undefined,
    contents.webhook_endpoints > 0 ? `${contents.webhook_endpoints} webhook endpoint(s)` : undefined,
    contents.domains > 0 ? `${contents.domains} domain(s)` : undefined,
  ].filter((h) => h !== undefined);
  if (held.length > 0) return new AppError('conflict', `environment "${env.name}" still holds ${held.join(', ')}; delete or revoke them first`);
  return undefined;
}

/** Why the default environment's members cannot be changed; undefined for another environment. */
export function membershipChangeRefusal(env: Pick<EnvironmentRow, 'is_default' | 'name'>): AppError | undefined {
  if (env.is_default) return new AppError('conflict', `"${env.name}" is the default environment: every member of the organization is in it`);
  return undefined;
}

export function toEnvironmentMember(envId: string, row: MemberRow, addedAt: Date, profile: UserProfile | undefined): EnvironmentMember {
  return {
    env_id: envId,
    member_id: row.id,
    user_id: row.user_id,
    role: row.role,
    email: profile?.email ?? null,
    name: profile?.name ?? null,
    created_at: addedAt.toISOString(),
  };
}

export class Environments {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<EnvironmentRepository, keyof EnvironmentRepository>,
    private readonly members: Pick<MemberRepository, keyof MemberRepository>,
    private readonly users: UsersPort,
    private readonly contents: EnvironmentContents,
    private readonly facts: EnvironmentFacts,
    private readonly plan: PlanGuard,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, req: { name: string }): Promise<Environment> {
    const { org_id } = await this.manager(auth);
    const row = { id: newId('environment'), org_id, name: req.name, created_at: this.clock.now() };
    await this.transact(async (trx) => {
      await this.plan.roomForOneMore(trx, org_id, 'environments', () => this.repo.count(org_id, trx));
      if (!(await this.repo.insert(row, trx))) throw new AppError('conflict', `the organization already has an environment named "${req.name}"`);
    });
    return toEnvironment({ ...row, is_default: false });
  }

  async list(auth: AuthContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Environment[]; next_page_token: string | null }> {
    const tenant = authorize(auth, 'environments.read');
    const after = pageCursor(q.page_token, envCursor)?.after;
    const rows = await this.repo.list(tenant.org_id, { limit: q.limit + 1, after, visibleTo: this.limitedTo(tenant) });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toEnvironment), next_page_token: rows.length > q.limit && last ? encodePageToken({ after: last.id }) : null };
  }

  async get(auth: AuthContext, envId: string): Promise<Environment> {
    return toEnvironment(await this.visible(authorize(auth, 'environments.read'), envId));
  }

  async rename(auth: AuthContext, envId: string, name: string): Promise<Environment> {
    const { org_id } = await this.manager(auth);
    const renamed = await this.repo.rename(org_id, envId, name);
    if (renamed === 'duplicate') throw new AppError('conflict', `the organization already has an environment named "${name}"`);
    if (!renamed) throw AppError.notFound('environment');
    return toEnvironment(renamed);
  }

  async delete(auth: AuthContext, envId: string): Promise<void> {
    const { org_id } = await this.manager(auth);
    const env = await this.repo.find(org_id, envId);
    if (!env) throw AppError.notFound('environment');
    const refusal = deletionRefusal(env, env.is_default ? { inboxes: 0, api_keys: 0, webhook_endpoints: 0, domains: 0 } : await this.contents.count(org_id, envId));
    if (refusal) throw refusal;
    await this.transact(async (trx) => {
      if (!(await this.repo.delete(org_id, envId, trx))) throw AppError.notFound('environment');
      await this.facts.deleted(trx, { org_id, env_id: envId, deleted_at: this.clock.now().toISOString() });
    });
    this.facts.kick();
  }

  /** For the gateway: the environment if this person, with this role, may act in it. */
  async access(req: { org_id: string; env_id: string; user_id: string; role: Role }): Promise<Environment> {
    const env = await this.repo.find(req.org_id, req.env_id);
    if (!env) throw AppError.notFound('environment');
    if (maySeeEnvironment(req.role, env, false)) return toEnvironment(env);
    if (!(await this.repo.isMember(req.org_id, req.env_id, req.user_id))) throw AppError.notFound('environment');
    return toEnvironment(env);
  }

  async listMembers(auth: AuthContext, envId: string, q: { limit: number; page_token?: string | undefined }): Promise<{ data: EnvironmentMember[]; next_page_token: string | null }> {
    const tenant = authorize(auth, 'environments.read');
    const env = await this.visible(tenant, envId);
    const after = pageCursor(q.page_token, memberCursor)?.after;
    // The default environment is every member's: its list is the organization's.
    const rows = env.is_default
      ? (await this.members.list(tenant.org_id, { limit: q.limit + 1, after })).map((m) => ({ ...m, added_at: m.created_at }))
      : await this.repo.listMembers(tenant.org_id, envId, { limit: q.limit + 1, after });
    const page = rows.slice(0, q.limit);
    const profiles = page.length ? new Map((await this.users.profiles([...new Set(page.map((r) => r.user_id))])).map((p) => [p.id, p])) : new Map<string, UserProfile>();
    const last = page.at(-1);
    return {
      data: page.map((r) => toEnvironmentMember(envId, r, r.added_at, profiles.get(r.user_id))),
      next_page_token: rows.length > q.limit && last ? encodePageToken({ after: last.id }) : null,
    };
  }

  async addMember(auth: AuthContext, envId: string, memberId: string): Promise<EnvironmentMember> {
    const { org_id } = await this.manager(auth);
    const env = await this.repo.find(org_id, envId);
    if (!env) throw AppError.notFound('environment');
    const refusal = membershipChangeRefusal(env);
    if (refusal) throw refusal;
    const member = await this.members.find(org_id, memberId);
    if (!member) throw AppError.notFound('member');
    const now = this.clock.now();
    await this.transact(async (trx) => {
      const added = await this.repo.addMember({ env_id: envId, member_id: memberId, org_id, user_id: member.user_id, created_at: now }, trx);
      if (added === 'already') throw new AppError('conflict', `the member is already in environment "${env.name}"`);
      // Removed from the organization, or the environment deleted, since they were read.
      if (added === 'gone') throw AppError.notFound('member or environment');
      await this.facts.memberChanged(trx, { org_id, env_id: envId, user_id: member.user_id, member_id: memberId, member: true, changed_at: now.toISOString() });
    });
    this.facts.kick();
    const [profile] = await this.users.profiles([member.user_id]);
    return toEnvironmentMember(envId, member, now, profile);
  }

  async removeMember(auth: AuthContext, envId: string, memberId: string): Promise<void> {
    const { org_id } = await this.manager(auth);
    const env = await this.repo.find(org_id, envId);
    if (!env) throw AppError.notFound('environment');
    const refusal = membershipChangeRefusal(env);
    if (refusal) throw refusal;
    await this.transact(async (trx) => {
      const removed = await this.repo.removeMember(org_id, envId, memberId, trx);
      if (!removed) throw new AppError('not_found', `member not found in environment "${env.name}"`);
      await this.facts.memberChanged(trx, { org_id, env_id: envId, user_id: removed.user_id, member_id: memberId, member: false, changed_at: this.clock.now().toISOString() });
    });
    this.facts.kick();
  }

  /**
   * The caller, if the role stored now lets them manage environments: a token's role may be a
   * second old (a demoted admin's, until the fact reaches the gateway).
   */
  private async manager(auth: AuthContext): Promise<TenantContext> {
    const tenant = authorize(auth, 'environments.manage');
    if (tenant.kind !== 'user') return tenant;
    const me = await this.members.findByUser(tenant.org_id, tenant.user_id);
    if (!me || !ROLE_PERMISSIONS[me.role].includes('environments.manage')) {
      throw new AppError('forbidden', `only the owner or an admin can manage environments; your role is ${me?.role ?? 'none'}`);
    }
    return tenant;
  }

  /** The person whose view is limited to their environments; undefined for who sees all (owner, admin). */
  private limitedTo(tenant: TenantContext): string | undefined {
    if (tenant.kind !== 'user' || seesEveryEnvironment(tenant.role)) return undefined;
    return tenant.user_id;
  }

  private async visible(tenant: TenantContext, envId: string): Promise<EnvironmentRow> {
    const env = await this.repo.find(tenant.org_id, envId);
    if (!env) throw AppError.notFound('environment');
    // API keys hold no environments.* permission: only people reach here.
    if (tenant.kind !== 'user' || maySeeEnvironment(tenant.role, env, false)) return env;
    if (!(await this.repo.isMember(tenant.org_id, envId, tenant.user_id))) throw AppError.notFound('environment');
    return env;
  }
}
