/** Organization exports: one query per method. */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AdminDb, ExportTable } from './tables';

export type ExportRow = Selectable<ExportTable>;
const ACTIVE = ['queued', 'running'] as const;
const FINISHED = ['completed', 'failed'] as const;

export interface ExportProgress {
  resources_done: number;
  current_resource: string | null;
  records: number;
  files: number;
  bytes: number;
}

export class ExportRepository {
  constructor(private readonly db: Kysely<AdminDb>) {}

  /** The new export, or undefined when the organization has one queued or running already. */
  insert(row: Pick<ExportRow, 'id' | 'org_id' | 'created_by' | 'created_at' | 'heartbeat_at' | 'resources_total'>, ex: Executor<AdminDb> = this.db): Promise<ExportRow | undefined> {
    return ex
      .insertInto('exports')
      .values({ ...row, status: 'queued' })
      .onConflict((oc) => oc.column('org_id').where('status', 'in', ACTIVE).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  findActive(orgId: string, ex: Executor<AdminDb> = this.db): Promise<ExportRow | undefined> {
    return ex.selectFrom('exports').selectAll().where('org_id', '=', orgId).where('status', 'in', ACTIVE).executeTakeFirst();
  }

  find(id: string, ex: Executor<AdminDb> = this.db): Promise<ExportRow | undefined> {
    return ex.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(limit: number, before: string | undefined, ex: Executor<AdminDb> = this.db): Promise<ExportRow[]> {
    let q = ex.selectFrom('exports').selectAll();
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** Queued -> running; false when it is not queued any more (failed meanwhile). */
  async markRunning(id: string, at: Date, ex: Executor<AdminDb> = this.db): Promise<boolean> {
    const r = await ex.updateTable('exports').set({ status: 'running', started_at: at, heartbeat_at: at }).where('id', '=', id).where('status', '=', 'queued').executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async saveProgress(id: string, progress: ExportProgress, at: Date, ex: Executor<AdminDb> = this.db): Promise<void> {
    await ex.updateTable('exports').set({ ...progress, heartbeat_at: at }).where('id', '=', id).where('status', '=', 'running').execute();
  }

  /** The instance holding these exports is alive. */
  async heartbeat(ids: string[], at: Date, ex: Executor<AdminDb> = this.db): Promise<void> {
    if (ids.length === 0) return;
    await ex.updateTable('exports').set({ heartbeat_at: at }).where('id', 'in', ids).where('status', 'in', ACTIVE).execute();
  }

  /** Running or queued -> completed or failed; false when it had been ended already (failed by the purge job). */
  async finish(
    id: string,
    end: { status: 'completed' | 'failed'; finished_at: Date; expires_at: Date; size_bytes: number | null; error: string | null; progress?: ExportProgress },
    ex: Executor<AdminDb> = this.db,
  ): Promise<boolean> {
    const { progress, ...rest } = end;
    const r = await ex
      .updateTable('exports')
      .set({ ...rest, ...progress, current_resource: null })
      .where('id', '=', id)
      .where('status', 'in', ACTIVE)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Queued or running exports whose heartbeat stopped before `before`: failed, with why; their ids. */
  async failStale(before: Date, now: Date, expiresAt: Date, error: string, ex: Executor<AdminDb> = this.db): Promise<string[]> {
    const rows = await ex
      .updateTable('exports')
      .set({ status: 'failed', finished_at: now, expires_at: expiresAt, error, current_resource: null })
      .where('status', 'in', ACTIVE)
      .where('heartbeat_at', '<', before)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Finished exports whose time is up, oldest first. */
  due(now: Date, limit: number, ex: Executor<AdminDb> = this.db): Promise<Pick<ExportRow, 'id'>[]> {
    return ex.selectFrom('exports').select('id').where('status', 'in', FINISHED).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
  }

  async markExpired(id: string, ex: Executor<AdminDb> = this.db): Promise<void> {
    await ex.updateTable('exports').set({ status: 'expired' }).where('id', '=', id).where('status', 'in', FINISHED).execute();
  }
}
