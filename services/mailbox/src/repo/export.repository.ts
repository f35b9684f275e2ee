/**
 * An organization's rows for its export (issue 28, part 4), in id order from `after`: one
 * query per resource, every one filtered on the organization. Messages come without their
 * bodies (the raw message, exported beside them, holds them byte for byte).
 */
import { sql, type Executor, type Kysely } from '@mailroom/db';
import type { ExportPageQuery } from '@mailroom/contracts';
import type { MailboxDb } from './tables';

export class MailboxExportRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  /** Deleted inboxes too (deleted_at set): their messages are still held. */
  inboxes({ orgId, after, limit }: ExportPageQuery, ex: Executor<MailboxDb> = this.db) {
    let q = ex.selectFrom('inboxes').select(['id', 'org_id', 'env_id', 'address', 'username', 'domain', 'display_name', 'status', 'created_at', 'updated_at', 'deleted_at']).where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  threads({ orgId, after, limit }: ExportPageQuery, ex: Executor<MailboxDb> = this.db) {
    let q = ex.selectFrom('threads').select(['id', 'org_id', 'env_id', 'inbox_id', 'subject', 'message_count', 'last_message_at', 'created_at', 'updated_at']).where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  messages({ orgId, after, limit }: ExportPageQuery, ex: Executor<MailboxDb> = this.db) {
    let q = ex
      .selectFrom('messages as m')
      .select((eb) => [
        'm.id',
        'm.org_id',
        'm.env_id',
        'm.inbox_id',
        'm.thread_id',
        'm.direction',
        'm.raw_id',
        'm.raw_size',
        'm.message_id_header',
        'm.in_reply_to',
        'm.references',
        'm.from_address',
        'm.from_name',
        'm.reply_to',
        'm.to_addresses',
        'm.cc_addresses',
        'm.subject',
        'm.has_attachments',
        'm.auth',
        'm.spam',
        'm.mail_from',
        'm.parse_error',
        'm.received_at',
        'm.created_at',
        eb.fn
          .coalesce(
            eb.selectFrom('message_labels as l').select((e) => e.fn.agg<string[]>('array_agg', ['l.label']).as('labels')).whereRef('l.message_id', '=', 'm.id').where('l.org_id', '=', orgId),
            sql<string[]>`'{}'::text[]`,
          )
          .as('labels'),
      ])
      .where('m.org_id', '=', orgId);
    if (after) q = q.where('m.id', '>', after);
    return q.orderBy('m.id').limit(limit).execute();
  }

  attachments({ orgId, after, limit }: ExportPageQuery, ex: Executor<MailboxDb> = this.db) {
    let q = ex
      .selectFrom('attachments')
      .select(['id', 'org_id', 'message_id', 'filename', 'content_type', 'size', 'content_id', 'disposition', 'checksum', 'position', 'object_name'])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }
}
