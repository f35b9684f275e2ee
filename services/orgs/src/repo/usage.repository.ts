/** What an organization holds in orgs, for its usage: one statement, every count filtered on the organization. */
import { sql, type Executor, type Kysely } from '@mailroom/db';
import type { OrgsDb } from './tables';

export interface HeldInOrgs {
  plan: string;
  members: number;
  pending_invitations: number;
  environments: number;
}

export class UsageRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** The plan, the members, the invitations still pending at `now` (not expired), the environments; undefined: no such organization. */
  async held(orgId: string, now: Date, ex: Executor<OrgsDb> = this.db): Promise<HeldInOrgs | undefined> {
    const { rows } = await sql<HeldInOrgs>`
      select o.plan,
        (select count(*)::int from members m where m.org_id = o.id) as members,
        (select count(*)::int from invitations i where i.org_id = o.id and i.status = 'pending' and i.expires_at > ${now}) as pending_invitations,
        (select count(*)::int from environments e where e.org_id = o.id) as environments
      from organizations o
      where o.id = ${orgId}`.execute(ex);
    return rows[0];
  }
}
