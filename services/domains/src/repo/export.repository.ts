/**
 * An organization's custom domains for its export (issue 28, part 4), in id order from
 * `after`, filtered on the organization: public keys and selectors, never a private key.
 */
import type { Executor, Kysely } from '@mailroom/db';
import type { ExportPageQuery } from '@mailroom/contracts';
import type { DomainsDb } from './tables';

export class DomainsExportRepository {
  constructor(private readonly db: Kysely<DomainsDb>) {}

  domains({ orgId, after, limit }: ExportPageQuery, ex: Executor<DomainsDb> = this.db) {
    let q = ex
      .selectFrom('domains')
      .select([
        'id',
        'org_id',
        'env_id',
        'name',
        'status',
        'failure_reason',
        'dkim_selector',
        'dkim_public_key',
        'dkim_next_selector',
        'dkim_next_public_key',
        'checks',
        'catch_all_inbox_id',
        'catch_all_address',
        'created_at',
        'verified_at',
        'last_checked_at',
      ])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }
}
