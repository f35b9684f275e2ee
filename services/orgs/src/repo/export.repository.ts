/**
 * An organization's rows for its export (issue 28, part 4), in id order from `after`: one
 * query per resource, every one filtered on the organization. Secrets stay out (an
 * invitation's token hash).
 */
import { sql, type Executor, type Kysely } from '@mailroom/db';
import type { ExportPageQuery } from '@mailroom/contracts';
import type { OrgsDb } from './tables';

export class OrgsExportRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  organization({ orgId, after, limit }: ExportPageQuery, ex: Executor<OrgsDb> = this.db) {
    let q = ex.selectFrom('organizations').select(['id', 'name', 'plan', 'status', 'signup_user_id', 'created_at', 'updated_at']).where('id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  environments({ orgId, after, limit }: ExportPageQuery, ex: Executor<OrgsDb> = this.db) {
    let q = ex.selectFrom('environments').select(['id', 'org_id', 'name', 'is_default', 'created_at']).where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  /** Members with the environments given to them (beyond the default one every member is in). */
  members({ orgId, after, limit }: ExportPageQuery, ex: Executor<OrgsDb> = this.db) {
    let q = ex
      .selectFrom('members as m')
      .select((eb) => [
        'm.id',
        'm.org_id',
        'm.user_id',
        'm.role',
        'm.created_at',
        eb.fn
          .coalesce(
            eb.selectFrom('environment_members as em').select((e) => e.fn.agg<string[]>('array_agg', ['em.env_id']).as('envs')).whereRef('em.member_id', '=', 'm.id').where('em.org_id', '=', orgId),
            sql<string[]>`'{}'::text[]`,
          )
          .as('environment_ids'),
      ])
      .where('m.org_id', '=', orgId);
    if (after) q = q.where('m.id', '>', after);
    return q.orderBy('m.id').limit(limit).execute();
  }

  invitations({ orgId, after, limit }: ExportPageQuery, ex: Executor<OrgsDb> = this.db) {
    let q = ex
      .selectFrom('invitations')
      .select(['id', 'org_id', 'email', 'role', 'status', 'invited_by_user_id', 'created_at', 'expires_at', 'decided_at', 'member_id'])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  upgradeRequests({ orgId, after, limit }: ExportPageQuery, ex: Executor<OrgsDb> = this.db) {
    let q = ex.selectFrom('upgrade_requests').selectAll().where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }
}
