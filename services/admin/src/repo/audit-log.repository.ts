/** The audit log: one query per method; entries are inserted and read, never updated. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AdminDb, AuditLogTable } from './tables';

export type AuditLogRow = Selectable<AuditLogTable>;
export type NewAuditLogRow = Omit<AuditLogRow, 'details'> & { details: string };

export interface AuditLogFilter {
  org_id?: string | undefined;
  action?: string | undefined;
  actor_id?: string | undefined;
  target_id?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export class AuditLogRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  /** Stores the entry once (an entry read again from the stream is the same id): whether it was new. */
  async insert(row: NewAuditLogRow, ex: Executor<AdminDb> = this.db): Promise<boolean> {
    const done = await ex.insertInto('audit_log').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
    return Number(done.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Newest first; `before`: the last id of the previous page. */
  list(filter: AuditLogFilter, limit: number, before: string | undefined, ex: Executor<AdminDb> = this.db): Promise<AuditLogRow[]> {
    let q = ex.selectFrom('audit_log').selectAll();
    if (filter.org_id) q = q.where('org_id', '=', filter.org_id);
    if (filter.action) q = q.where('action', '=', filter.action);
    if (filter.actor_id) q = q.where('actor_id', '=', filter.actor_id);
    if (filter.target_id) q = q.where('target_id', '=', filter.target_id);
    if (filter.from) q = q.where('at', '>=', filter.from);
    if (filter.to) q = q.where('at', '<', filter.to);
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** Deletes the entries of before `at`; how many. */
  async deleteBefore(at: Date, ex: Executor<AdminDb> = this.db): Promise<number> {
    const done = await ex.deleteFrom('audit_log').where('at', '<', at).executeTakeFirst();
    return Number(done.numDeletedRows);
  }
}
