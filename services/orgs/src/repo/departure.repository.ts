/** Queries of a person's organizations when their account is deleted or purged (domain/departures.ts). */
import type { Executor, Kysely } from '@mailroom/db';
import type { MemberRow } from './member.repository';
import type { OrgsDb } from './tables';

export class DepartureRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** The organizations this person owns, each with its number of members (the owner included), by id. */
  async ownedBy(userId: string, ex: Executor<OrgsDb> = this.db): Promise<{ org_id: string; org_name: string; members: number }[]> {
    const rows = await ex
      .selectFrom('members as m')
      .innerJoin('organizations as o', 'o.id', 'm.org_id')
      .select((eb) => ['o.id as org_id', 'o.name as org_name', eb.selectFrom('members as x').select(eb.fn.countAll<string>().as('n')).whereRef('x.org_id', '=', 'm.org_id').as('members')])
      .where('m.user_id', '=', userId)
      .where('m.role', '=', 'owner')
      .orderBy('o.id')
      .execute();
    return rows.map((r) => ({ org_id: r.org_id, org_name: r.org_name, members: Number(r.members) }));
  }

  async organizationsOf(userId: string, ex: Executor<OrgsDb> = this.db): Promise<string[]> {
    const rows = await ex.selectFrom('members').select('org_id').where('user_id', '=', userId).orderBy('org_id').execute();
    return rows.map((r) => r.org_id);
  }

  /** Locks the organization's row until the caller's transaction ends (joining locks it too, so nobody joins meanwhile); false when it is gone. */
  async lockOrganization(orgId: string, ex: Executor<OrgsDb>): Promise<boolean> {
    return (await ex.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().executeTakeFirst()) !== undefined;
  }

  /** Every member, longest-standing first. */
  members(orgId: string, ex: Executor<OrgsDb>): Promise<MemberRow[]> {
    return ex.selectFrom('members').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
  }

  async environmentIds(orgId: string, ex: Executor<OrgsDb>): Promise<string[]> {
    const rows = await ex.selectFrom('environments').select('id').where('org_id', '=', orgId).orderBy('id').execute();
    return rows.map((r) => r.id);
  }

  /** The organization and everything of it in this schema (environments, members, invitations, transfers, upgrade requests). */
  async deleteOrganization(orgId: string, ex: Executor<OrgsDb>): Promise<void> {
    await ex.deleteFrom('organizations').where('id', '=', orgId).execute();
  }
}
