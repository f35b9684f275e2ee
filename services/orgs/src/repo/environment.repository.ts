/** Queries of an organization's environments and who may act in them; every one filters on org_id. */
import { isForeignKeyViolation, isUniqueViolation, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { EnvironmentMemberTable, EnvironmentTable, MemberTable, OrgsDb } from './tables';

export type EnvironmentRow = Selectable<EnvironmentTable>;
export type EnvironmentMemberRow = Selectable<EnvironmentMemberTable>;
/** A member of the organization, with when they were given the environment. */
export type EnvironmentMemberView = Selectable<MemberTable> & { added_at: Date };

export class EnvironmentRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** Oldest first; `visibleTo`: only the default environment and those this person is a member of. */
  list(orgId: string, opts: { limit: number; after?: string | undefined; visibleTo?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentRow[]> {
    let q = ex.selectFrom('environments as e').selectAll('e').where('e.org_id', '=', orgId);
    const user = opts.visibleTo;
    if (user !== undefined) {
      q = q.where((eb) =>
        eb.or([
          eb('e.is_default', '=', true),
          eb.exists(eb.selectFrom('environment_members as em').select('em.env_id').whereRef('em.env_id', '=', 'e.id').where('em.user_id', '=', user)),
        ]),
      );
    }
    if (opts.after) q = q.where('e.id', '>', opts.after);
    return q.orderBy('e.id', 'asc').limit(opts.limit).execute();
  }

  /** The organization's environments, the default one included (what the plan's `environments` limit counts). */
  async count(orgId: string, ex: Executor<OrgsDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('environments').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(orgId: string, envId: string, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentRow | undefined> {
    return ex.selectFrom('environments').selectAll().where('org_id', '=', orgId).where('id', '=', envId).executeTakeFirst();
  }

  /** false: the organization has an environment of this name. */
  async insert(row: Omit<EnvironmentRow, 'is_default'>, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const res = await ex
      .insertInto('environments')
      .values({ ...row, is_default: false })
      .onConflict((oc) => oc.columns(['org_id', 'name']).doNothing())
      .executeTakeFirst();
    return res.numInsertedOrUpdatedRows === 1n;
  }

  /** The renamed row; `duplicate` when another environment of the organization has the name. */
  async rename(orgId: string, envId: string, name: string, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentRow | 'duplicate' | undefined> {
    try {
      return await ex.updateTable('environments').set({ name }).where('org_id', '=', orgId).where('id', '=', envId).returningAll().executeTakeFirst();
    } catch (err) {
      if (isUniqueViolation(err)) return 'duplicate';
      throw err;
    }
  }

  /** Never the default environment; its members' rows go with it. */
  async delete(orgId: string, envId: string, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('environments').where('org_id', '=', orgId).where('id', '=', envId).where('is_default', '=', false).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  async isMember(orgId: string, envId: string, userId: string, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const row = await ex.selectFrom('environment_members').select('env_id').where('org_id', '=', orgId).where('env_id', '=', envId).where('user_id', '=', userId).executeTakeFirst();
    return row !== undefined;
  }

  /** By member id; `after` is the last member id of the previous page. */
  listMembers(orgId: string, envId: string, opts: { limit: number; after?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentMemberView[]> {
    let q = ex
      .selectFrom('environment_members as em')
      .innerJoin('members as m', 'm.id', 'em.member_id')
      .selectAll('m')
      .select('em.created_at as added_at')
      .where('em.org_id', '=', orgId)
      .where('em.env_id', '=', envId);
    if (opts.after) q = q.where('em.member_id', '>', opts.after);
    return q.orderBy('em.member_id', 'asc').limit(opts.limit).execute();
  }

  /** `added`; `already` when the member has the environment; `gone` when the member or the environment was deleted meanwhile. */
  async addMember(row: EnvironmentMemberRow, ex: Executor<OrgsDb> = this.db): Promise<'added' | 'already' | 'gone'> {
    try {
      const res = await ex.insertInto('environment_members').values(row).onConflict((oc) => oc.columns(['env_id', 'member_id']).doNothing()).executeTakeFirst();
      return res.numInsertedOrUpdatedRows === 1n ? 'added' : 'already';
    } catch (err) {
      if (isForeignKeyViolation(err)) return 'gone';
      throw err;
    }
  }

  /** The removed row; undefined when the member did not have the environment. */
  removeMember(orgId: string, envId: string, memberId: string, ex: Executor<OrgsDb> = this.db): Promise<EnvironmentMemberRow | undefined> {
    return ex.deleteFrom('environment_members').where('org_id', '=', orgId).where('env_id', '=', envId).where('member_id', '=', memberId).returningAll().executeTakeFirst();
  }
}
