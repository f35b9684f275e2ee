/**
 * An organization's rows for its export (issue 28, part 4), in id order from `after`: one
 * query per resource, every one filtered on the organization. Endpoints without their sealed
 * signing secret; deliveries (one row per attempt) are their endpoint's organization's.
 */
import type { Executor, Kysely } from '@mailroom/db';
import type { ExportPageQuery } from '@mailroom/contracts';
import type { WebhooksDb } from './tables';

export class WebhooksExportRepository {
  constructor(private readonly db: Kysely<WebhooksDb>) {}

  endpoints({ orgId, after, limit }: ExportPageQuery, ex: Executor<WebhooksDb> = this.db) {
    let q = ex
      .selectFrom('endpoints')
      .select(['id', 'org_id', 'env_id', 'url', 'event_types', 'inbox_ids', 'description', 'disabled', 'disabled_reason', 'disabled_at', 'consecutive_failures', 'created_at', 'updated_at'])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  deliveries({ orgId, after, limit }: ExportPageQuery, ex: Executor<WebhooksDb> = this.db) {
    let q = ex
      .selectFrom('attempts as a')
      .innerJoin('endpoints as e', 'e.id', 'a.endpoint_id')
      .leftJoin('events as ev', 'ev.id', 'a.event_id')
      .select([
        'a.id',
        'a.endpoint_id',
        'a.event_id',
        'ev.type as event_type',
        'a.attempt',
        'a.triggered_by',
        'a.status',
        'a.http_status',
        'a.error',
        'a.response_body',
        'a.duration_ms',
        'a.created_at',
        'a.next_attempt_at',
      ])
      .where('e.org_id', '=', orgId);
    if (after) q = q.where('a.id', '>', after);
    return q.orderBy('a.id').limit(limit).execute();
  }
}
