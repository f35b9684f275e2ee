/**
 * The audit log (issue 28, part 5): every admin action and the security-relevant actions of
 * tenants, newest first, kept a year. Each service writes the entries of its own actions in
 * the transaction that did them (admin's straight into this table, the others' through their
 * outbox to `audit.<service>`); an entry is believed only from the service that does that
 * action (contracts AUDIT_ACTIONS), and stored once whatever the redeliveries.
 */
import { AUDIT_ACTIONS, AppError, auditEntry, encodePageToken, idSchema, pageCursor, type AuditEntry } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { AuditLogFilter, AuditLogRepository, AuditLogRow, NewAuditLogRow } from '../repo/audit-log.repository';
import type { AdminExecutor } from '../repo/tables';

/** How long entries are kept. */
export const AUDIT_RETENTION_DAYS = 365;

const cursor = z.object({ before: idSchema('auditEntry') });

/** The instant before which entries are past their year at `now`. */
export function retainedSince(now: Date): Date {
  return new Date(now.getTime() - AUDIT_RETENTION_DAYS * 86_400_000);
}

/** Whether `source` (the service whose subject carried it) is the one that does the entry's action. */
export function believable(source: string, entry: Pick<AuditEntry, 'action'>): boolean {
  return AUDIT_ACTIONS[entry.action] === source;
}

export function toRow(entry: AuditEntry, source: string): NewAuditLogRow {
  return {
    id: entry.id,
    at: new Date(entry.at),
    action: entry.action,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    org_id: entry.org_id,
    target_type: entry.target.type,
    target_id: entry.target.id,
    details: JSON.stringify(entry.details),
    request_id: entry.request_id,
    ip: entry.ip,
    source,
  };
}

export function toEntry(row: AuditLogRow): AuditEntry {
  return auditEntry.parse({
    id: row.id,
    at: row.at.toISOString(),
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id },
    org_id: row.org_id,
    target: { type: row.target_type, id: row.target_id },
    details: row.details,
    request_id: row.request_id,
    ip: row.ip,
  });
}

export interface AuditQuery {
  limit: number;
  page_token?: string | undefined;
  org_id?: string | undefined;
  action?: string | undefined;
  actor_id?: string | undefined;
  target_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export class AuditLog {
  constructor(
    private readonly repo: Pick<AuditLogRepository, keyof AuditLogRepository>,
    private readonly clock: Clock,
  ) {}

  /** An admin action's entry, in the action's transaction. */
  async record(entry: AuditEntry, tx?: AdminExecutor): Promise<void> {
    await this.repo.insert(toRow(entry, 'admin'), tx);
  }

  /** An entry read from `audit.<source>`: stored once; refused when that service does not do that action. */
  async received(source: string, entry: AuditEntry): Promise<'stored' | 'repeated' | 'refused'> {
    if (!believable(source, entry)) return 'refused';
    return (await this.repo.insert(toRow(entry, source))) ? 'stored' : 'repeated';
  }

  async list(q: AuditQuery): Promise<{ data: AuditEntry[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const filter: AuditLogFilter = {
      org_id: q.org_id,
      action: q.action,
      actor_id: q.actor_id,
      target_id: q.target_id,
      from: q.from === undefined ? undefined : new Date(q.from),
      to: q.to === undefined ? undefined : new Date(q.to),
    };
    if (filter.from && filter.to && filter.from.getTime() >= filter.to.getTime()) {
      throw new AppError('invalid_request', 'from must be before to', { details: [{ path: 'from', message: 'not before to' }] });
    }
    const rows = await this.repo.list(filter, q.limit + 1, before);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toEntry), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /** Deletes what is past its year; how many entries went. */
  purge(): Promise<number> {
    return this.repo.deleteBefore(retainedSince(this.clock.now()));
  }
}
