/** Queries of an organization's members; every one filters on org_id. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { Role } from '@mailroom/contracts';
import type { MemberTable, OrgsDb } from './tables';

export type MemberRow = Selectable<MemberTable>;

export class MemberRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** Oldest first; `after` is the last id of the previous page. */
  list(orgId: string, opts: { limit: number; after?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<MemberRow[]> {
    let q = ex.selectFrom('members').selectAll().where('org_id', '=', orgId);
    if (opts.after) q = q.where('id', '>', opts.after);
    return q.orderBy('id', 'asc').limit(opts.limit).execute();
  }

  async count(orgId: string, ex: Executor<OrgsDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('members').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(orgId: string, memberId: string, ex: Executor<OrgsDb> = this.db): Promise<MemberRow | undefined> {
    return ex.selectFrom('members').selectAll().where('org_id', '=', orgId).where('id', '=', memberId).executeTakeFirst();
  }

  /**
   * The acting person's membership and the member acted on, locked until the caller's
   * transaction ends (in id order, so two admins acting on each other queue up rather than
   * deadlock): the change is decided on rows no one else can change meanwhile.
   */
  lockActorAndMember(orgId: string, actorUserId: string, memberId: string, ex: Executor<OrgsDb>): Promise<MemberRow[]> {
    return ex
      .selectFrom('members')
      .selectAll()
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('user_id', '=', actorUserId), eb('id', '=', memberId)]))
      .orderBy('id')
      .forUpdate()
      .execute();
  }

  /** `lock`: held until the caller's transaction ends. */
  findByUser(orgId: string, userId: string, ex: Executor<OrgsDb> = this.db, lock = false): Promise<MemberRow | undefined> {
    const q = ex.selectFrom('members').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId);
    return (lock ? q.forUpdate() : q).executeTakeFirst();
  }

  async updateRole(orgId: string, memberId: string, role: Role, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const res = await ex.updateTable('members').set({ role }).where('org_id', '=', orgId).where('id', '=', memberId).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async remove(orgId: string, memberId: string, ex: Executor<OrgsDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('members').where('org_id', '=', orgId).where('id', '=', memberId).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
