/**
 * Organization exports (issue 28, part 4): an operator starts one (one at a time per
 * organization: a second is a 409 naming the first), follows it, and downloads the archive
 * until it expires, 7 days after the job finished. A job lives as long as its heartbeat:
 * the instance running it renews it, and the purge (`sweep`) fails one whose heartbeat
 * stopped (its instance died), so no export stays running for ever. Every admin action on
 * exports is a method here (start), for the audit log to record.
 */
import { AppError, EXPORT_RETENTION_DAYS, auditEntryOf, encodePageToken, idSchema, newId, pageCursor, type AuditedCall, type OrgExport } from '@mailroom/contracts';
import type { Clock, Transact } from '@mailroom/platform';
import { z } from 'zod';
import type { ExportRepository, ExportRow } from '../repo/export.repository';
import type { AdminTx } from '../repo/tables';
import type { AuditLog } from './audit-log';
import type { Archives, Organizations } from './export-ports';
import { EXPORT_PLAN } from './export-job';

const cursor = z.object({ before: idSchema('export') });
const DAY_MS = 86_400_000;

export function expiresAfter(finishedAt: Date): Date {
  return new Date(finishedAt.getTime() + EXPORT_RETENTION_DAYS * DAY_MS);
}

export function downloadPath(id: string): string {
  return `/api/v1/admin/exports/${id}/download`;
}

export function toOrgExport(row: ExportRow): OrgExport {
  return {
    id: row.id,
    org_id: row.org_id,
    status: row.status,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    size_bytes: row.status === 'completed' ? row.size_bytes : null,
    progress: {
      resources_done: row.resources_done,
      resources_total: row.resources_total,
      current_resource: row.current_resource,
      records: row.records,
      files: row.files,
      bytes: row.bytes,
    },
    error: row.error,
    download_url: row.status === 'completed' ? downloadPath(row.id) : null,
  };
}

/** Who runs a new export's job (jobs/export-runner.ts). */
export interface ExportLauncher {
  launch(row: ExportRow): void;
}

export class Exports {
  constructor(
    private readonly repo: Pick<ExportRepository, keyof ExportRepository>,
    private readonly orgs: Organizations,
    private readonly archives: Pick<Archives, 'delete'>,
    private readonly launcher: ExportLauncher,
    private readonly clock: Clock,
    /** Starts and downloads are audited (an organization's whole data leaves with them). */
    private readonly trail: { transact: Transact<AdminTx>; audit: Pick<AuditLog, 'record'> },
  ) {}

  /** Starts exporting the organization; `by`: the admin key asking (`call`'s). */
  async start(by: string, orgId: string, call: AuditedCall): Promise<OrgExport> {
    if (!(await this.orgs.exists(orgId))) throw AppError.notFound('organization');
    const now = this.clock.now();
    const id = newId('export');
    const row = await this.trail.transact(async (tx) => {
      const made = await this.repo.insert({ id, org_id: orgId, created_by: by, created_at: now, heartbeat_at: now, resources_total: EXPORT_PLAN.length }, tx);
      if (made) await this.trail.audit.record(auditEntryOf(call, now, { action: 'export.started', org_id: orgId, target: { type: 'export', id } }), tx);
      return made;
    });
    if (!row) {
      const running = await this.repo.findActive(orgId);
      throw new AppError('conflict', `an export of this organization is already running: ${running?.id ?? 'finishing now, retry shortly'}`, {
        details: [{ path: 'id', message: running ? `export ${running.id} (${running.status}) must finish first` : 'an export is finishing' }],
      });
    }
    this.launcher.launch(row);
    return toOrgExport(row);
  }

  async list(q: { limit: number; page_token?: string | undefined }): Promise<{ data: OrgExport[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.repo.list(q.limit + 1, before);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toOrgExport), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async get(id: string): Promise<OrgExport> {
    const row = await this.repo.find(id);
    if (!row) throw AppError.notFound('export');
    return toOrgExport(row);
  }

  /** The archive to stream: completed ones only (expired: 410; not done or failed: 409). */
  async download(id: string, call: AuditedCall): Promise<{ bucket: 'exports'; object: string; content_type: string; filename: string; size: number }> {
    const row = await this.repo.find(id);
    if (!row) throw AppError.notFound('export');
    if (row.status === 'expired') throw new AppError('expired', `export ${id} expired at ${row.expires_at?.toISOString()}: its archive was deleted; start a new export`);
    if (row.status !== 'completed' || row.size_bytes === null) {
      throw new AppError('conflict', row.status === 'failed' ? `export ${id} failed (${row.error ?? 'no reason recorded'}); start a new export` : `export ${id} is ${row.status}: download it once completed`);
    }
    await this.trail.audit.record(auditEntryOf(call, this.clock.now(), { action: 'export.downloaded', org_id: row.org_id, target: { type: 'export', id } }));
    return { bucket: 'exports', object: row.id, content_type: 'application/zip', filename: `${row.org_id}-${row.id}.zip`, size: row.size_bytes };
  }

  /**
   * The purge: fails exports whose heartbeat stopped `staleMs` ago (interrupted), then deletes
   * the archives of those whose time is up (at most `batch` a run) and marks them expired.
   */
  async sweep(staleMs: number, batch = 100): Promise<{ interrupted: string[]; expired: number }> {
    const now = this.clock.now();
    const interrupted = await this.repo.failStale(new Date(now.getTime() - staleMs), now, expiresAfter(now), 'interrupted: the admin instance running it stopped; start a new export');
    // An interrupted job stored nothing (a partial archive is never an object), but make sure.
    for (const id of interrupted) await this.archives.delete(id);
    const due = await this.repo.due(now, batch);
    for (const { id } of due) {
      await this.archives.delete(id);
      await this.repo.markExpired(id);
    }
    return { interrupted, expired: due.length };
  }
}
