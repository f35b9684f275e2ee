/**
 * Messages, threads, attachments and labels. Reads are scoped to a tenant (org and
 * environment) and to live inboxes; writes of inbound mail happen in the consumer's
 * transaction.
 */
import { sql, type Executor, type Insertable, type Kysely, type Selectable } from '@mailroom/db';
import type { OutboxRow } from '@mailroom/runtime';
import type { InboxRow, Tenant } from './inbox.repository';
import type { AttachmentTable, MailboxDb, MessageTable, ThreadTable } from './tables';

export type MessageRow = Selectable<MessageTable>;
export type ThreadRow = Selectable<ThreadTable>;
export type AttachmentRow = Selectable<AttachmentTable>;

/** Newest first, paging on (time, id). */
export interface TimeCursor {
  at: Date;
  id: string;
}

export class MessageRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  // ---- inbound writes

  inboxesHoldingRaw(rawId: string, ex: Executor<MailboxDb> = this.db): Promise<{ inbox_id: string }[]> {
    return ex.selectFrom('messages').select('inbox_id').where('raw_id', '=', rawId).execute();
  }

  /** The thread of the newest message in the inbox whose Message-ID is one of `ids`. */
  findThreadOfParent(inboxId: string, ids: string[], ex: Executor<MailboxDb> = this.db): Promise<Pick<ThreadRow, 'id' | 'normalized_subject'> | undefined> {
    if (!ids.length) return Promise.resolve(undefined);
    return ex
      .selectFrom('messages as m')
      .innerJoin('threads as t', 't.id', 'm.thread_id')
      .select(['t.id', 't.normalized_subject'])
      .where('m.inbox_id', '=', inboxId)
      .where('m.message_id_header', 'in', ids)
      .orderBy('m.received_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * Stores one message, inbound or outbound, in one statement (atomic without a transaction,
   * one round trip): the message, unless this inbox already holds this raw message; then, only
   * if it was inserted, its new thread or its thread's counters, its attachments, its labels
   * and its outbox row (message.received, or the outbound send's work item). Returns whether
   * the message was inserted. Foreign keys are checked at the end of the statement, so the
   * message may name the thread inserted beside it.
   */
  async insertMessage(
    m: Insertable<MessageTable> & { id: string; thread_id: string; received_at: Date },
    thread: { create: true; row: Insertable<ThreadTable> & { preview: string } } | { create: false; preview: string },
    attachments: Omit<Insertable<AttachmentTable>, 'message_id'>[],
    labels: string[],
    outbox: OutboxRow | null,
    ex: Executor<MailboxDb> = this.db,
  ): Promise<boolean> {
    const now = new Date();
    const a = attachments;
    const col = <K extends keyof (typeof a)[number]>(k: K) => a.map((x) => x[k] ?? null);
    const t = thread.create ? thread.row : undefined;
    const { rows } = await sql<{ inserted: number }>`
      with m as (
        insert into messages (id, org_id, env_id, inbox_id, thread_id, direction, raw_id, raw_size, message_id_header, in_reply_to, "references",
          from_address, from_name, reply_to, to_addresses, cc_addresses, subject, text_body, html_body, extracted_text, has_attachments,
          auth, spam, mail_from, parse_error, received_at, created_at)
        values (${m.id}, ${m.org_id}, ${m.env_id}, ${m.inbox_id}, ${m.thread_id}, ${m.direction}, ${m.raw_id}, ${m.raw_size}, ${m.message_id_header},
          ${m.in_reply_to}, ${m.references ?? []}::text[], ${m.from_address}, ${m.from_name}, ${m.reply_to ?? []}::text[], ${m.to_addresses ?? []}::text[],
          ${m.cc_addresses ?? []}::text[], ${m.subject}, ${m.text_body}, ${m.html_body}, ${m.extracted_text}, ${m.has_attachments},
          ${m.auth}::jsonb, ${m.spam}::jsonb, ${m.mail_from}, ${m.parse_error}, ${m.received_at}, ${now})
        on conflict (inbox_id, raw_id) do nothing
        returning id
      ),
      new_thread as (
        insert into threads (id, org_id, env_id, inbox_id, subject, normalized_subject, message_count, preview, last_message_at, created_at, updated_at)
        select ${t?.id ?? null}, ${t?.org_id ?? null}, ${t?.env_id ?? null}, ${t?.inbox_id ?? null}, ${t?.subject ?? null}, ${t?.normalized_subject ?? null},
          1, ${t?.preview ?? ''}, ${m.received_at}, ${now}, ${now}
        from m where ${thread.create}
      ),
      old_thread as (
        update threads set message_count = message_count + 1,
          preview = case when ${m.received_at}::timestamptz >= last_message_at then ${thread.create ? '' : thread.preview} else preview end,
          last_message_at = greatest(last_message_at, ${m.received_at}::timestamptz),
          updated_at = ${now}
        where id = ${m.thread_id} and not ${thread.create} and exists (select 1 from m)
      ),
      att as (
        insert into attachments (id, message_id, org_id, filename, content_type, size, content_id, disposition, checksum, position, object_name)
        select x.id, m.id, ${m.org_id}, x.filename, x.content_type, x.size, x.content_id, x.disposition, x.checksum, x.position, x.object_name
        from m, unnest(${col('id')}::text[], ${col('filename')}::text[], ${col('content_type')}::text[], ${col('size')}::int[], ${col('content_id')}::text[],
          ${col('disposition')}::text[], ${col('checksum')}::text[], ${col('position')}::int[], ${col('object_name')}::text[])
          as x(id, filename, content_type, size, content_id, disposition, checksum, position, object_name)
      ),
      lbl as (
        insert into message_labels (message_id, label, org_id, env_id, thread_id)
        select m.id, l, ${m.org_id}, ${m.env_id}, ${m.thread_id} from m, unnest(${labels}::text[]) as l
      ),
      evt as (
        insert into outbox (id, subject, payload) select ${outbox?.id ?? null}, ${outbox?.subject ?? null}, ${outbox?.payload ?? null} from m where ${outbox !== null}
      )
      select count(*)::int as inserted from m`.execute(ex);
    return (rows[0]?.inserted ?? 0) > 0;
  }

  async addLabels(rows: { message_id: string; label: string; org_id: string; env_id: string; thread_id: string }[], ex: Executor<MailboxDb> = this.db): Promise<void> {
    if (rows.length) await ex.insertInto('message_labels').values(rows).onConflict((oc) => oc.columns(['message_id', 'label']).doNothing()).execute();
  }

  async removeLabels(messageIds: string[], labels: string[], ex: Executor<MailboxDb> = this.db): Promise<void> {
    if (messageIds.length && labels.length) {
      await ex.deleteFrom('message_labels').where('message_id', 'in', messageIds).where('label', 'in', labels).execute();
    }
  }

  // ---- tenant reads

  findMessage(t: Tenant, messageId: string, inboxId?: string, ex: Executor<MailboxDb> = this.db): Promise<MessageRow | undefined> {
    let q = ex
      .selectFrom('messages as m')
      .innerJoin('inboxes as i', 'i.id', 'm.inbox_id')
      .selectAll('m')
      .where('m.org_id', '=', t.org_id)
      .where('m.env_id', '=', t.env_id)
      .where('m.id', '=', messageId)
      .where('i.deleted_at', 'is', null);
    if (inboxId) q = q.where('m.inbox_id', '=', inboxId);
    return q.executeTakeFirst();
  }

  /**
   * A live inbox of the tenant and, in the same round trip, its message `messageId`
   * (undefined when the inbox has no such message): what a reply, reply-all or forward needs.
   * The message is joined by its id alone and its inbox compared here: joined on the inbox
   * too, PostgreSQL may read it through messages_by_inbox (inbox_id leads, id is third), that
   * is every entry of the inbox, and does on stale statistics (a busy inbox's replies then
   * cost more with each message it holds).
   */
  async findInboxWithMessage(t: Tenant, inboxId: string, messageId: string, ex: Executor<MailboxDb> = this.db): Promise<{ inbox: InboxRow; message: MessageRow | undefined } | undefined> {
    const row = await ex
      .selectFrom('inboxes as i')
      .leftJoin('messages as m', (join) => join.on('m.id', '=', messageId).on('m.org_id', '=', t.org_id).on('m.env_id', '=', t.env_id))
      .selectAll('m')
      .select([
        'i.id as inbox__id',
        'i.org_id as inbox__org_id',
        'i.env_id as inbox__env_id',
        'i.username as inbox__username',
        'i.domain as inbox__domain',
        'i.address as inbox__address',
        'i.display_name as inbox__display_name',
        'i.status as inbox__status',
        'i.created_at as inbox__created_at',
        'i.updated_at as inbox__updated_at',
        'i.deleted_at as inbox__deleted_at',
      ])
      .where('i.org_id', '=', t.org_id)
      .where('i.env_id', '=', t.env_id)
      .where('i.id', '=', inboxId)
      .where('i.deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    const { inbox__id, inbox__org_id, inbox__env_id, inbox__username, inbox__domain, inbox__address, inbox__display_name, inbox__status, inbox__created_at, inbox__updated_at, inbox__deleted_at, ...message } = row;
    const inbox: InboxRow = {
      id: inbox__id,
      org_id: inbox__org_id,
      env_id: inbox__env_id,
      username: inbox__username,
      domain: inbox__domain,
      address: inbox__address,
      display_name: inbox__display_name,
      status: inbox__status,
      created_at: inbox__created_at,
      updated_at: inbox__updated_at,
      deleted_at: inbox__deleted_at,
    };
    return { inbox, message: message.id === null || message.inbox_id !== inbox.id ? undefined : (message as MessageRow) };
  }

  findMessages(t: Tenant, messageIds: string[], ex: Executor<MailboxDb> = this.db): Promise<Pick<MessageRow, 'id' | 'thread_id'>[]> {
    if (!messageIds.length) return Promise.resolve([]);
    return ex
      .selectFrom('messages as m')
      .innerJoin('inboxes as i', 'i.id', 'm.inbox_id')
      .select(['m.id', 'm.thread_id'])
      .where('m.org_id', '=', t.org_id)
      .where('m.env_id', '=', t.env_id)
      .where('m.id', 'in', messageIds)
      .where('i.deleted_at', 'is', null)
      .execute();
  }

  listMessages(
    t: Tenant,
    q: { inboxId: string; limit: number; cursor?: TimeCursor | undefined; label?: string | undefined; before?: Date | undefined; after?: Date | undefined },
    ex: Executor<MailboxDb> = this.db,
  ): Promise<MessageRow[]> {
    let query = ex
      .selectFrom('messages as m')
      .selectAll('m')
      .where('m.org_id', '=', t.org_id)
      .where('m.env_id', '=', t.env_id)
      .where('m.inbox_id', '=', q.inboxId);
    if (q.label) {
      const label = q.label;
      query = query.where((eb) => eb.exists(eb.selectFrom('message_labels as l').select('l.message_id').whereRef('l.message_id', '=', 'm.id').where('l.label', '=', label)));
    }
    if (q.before) query = query.where('m.received_at', '<', q.before);
    if (q.after) query = query.where('m.received_at', '>', q.after);
    if (q.cursor) {
      const c = q.cursor;
      query = query.where((eb) => eb.or([eb('m.received_at', '<', c.at), eb.and([eb('m.received_at', '=', c.at), eb('m.id', '<', c.id)])]));
    }
    return query.orderBy('m.received_at', 'desc').orderBy('m.id', 'desc').limit(q.limit).execute();
  }

  messagesOfThread(t: Tenant, threadId: string, ex: Executor<MailboxDb> = this.db): Promise<MessageRow[]> {
    return ex
      .selectFrom('messages')
      .selectAll()
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('thread_id', '=', threadId)
      .orderBy('received_at', 'asc')
      .orderBy('id', 'asc')
      .limit(1000)
      .execute();
  }

  findThread(t: Tenant, threadId: string, inboxId?: string, ex: Executor<MailboxDb> = this.db): Promise<ThreadRow | undefined> {
    let q = ex
      .selectFrom('threads as th')
      .innerJoin('inboxes as i', 'i.id', 'th.inbox_id')
      .selectAll('th')
      .where('th.org_id', '=', t.org_id)
      .where('th.env_id', '=', t.env_id)
      .where('th.id', '=', threadId)
      .where('i.deleted_at', 'is', null);
    if (inboxId) q = q.where('th.inbox_id', '=', inboxId);
    return q.executeTakeFirst();
  }

  listThreads(t: Tenant, q: { inboxId: string; limit: number; cursor?: TimeCursor | undefined; label?: string | undefined }, ex: Executor<MailboxDb> = this.db): Promise<ThreadRow[]> {
    let query = ex.selectFrom('threads as th').selectAll('th').where('th.org_id', '=', t.org_id).where('th.env_id', '=', t.env_id).where('th.inbox_id', '=', q.inboxId);
    if (q.label) {
      const label = q.label;
      query = query.where((eb) => eb.exists(eb.selectFrom('message_labels as l').select('l.message_id').whereRef('l.thread_id', '=', 'th.id').where('l.label', '=', label)));
    }
    if (q.cursor) {
      const c = q.cursor;
      query = query.where((eb) => eb.or([eb('th.last_message_at', '<', c.at), eb.and([eb('th.last_message_at', '=', c.at), eb('th.id', '<', c.id)])]));
    }
    return query.orderBy('th.last_message_at', 'desc').orderBy('th.id', 'desc').limit(q.limit).execute();
  }

  async labelsOfMessages(messageIds: string[], ex: Executor<MailboxDb> = this.db): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!messageIds.length) return out;
    const rows = await ex.selectFrom('message_labels').select(['message_id', 'label']).where('message_id', 'in', messageIds).orderBy('label').execute();
    for (const r of rows) out.set(r.message_id, [...(out.get(r.message_id) ?? []), r.label]);
    return out;
  }

  async labelsOfThreads(threadIds: string[], ex: Executor<MailboxDb> = this.db): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!threadIds.length) return out;
    const rows = await ex.selectFrom('message_labels').select(['thread_id', 'label']).distinct().where('thread_id', 'in', threadIds).orderBy('label').execute();
    for (const r of rows) out.set(r.thread_id, [...(out.get(r.thread_id) ?? []), r.label]);
    return out;
  }

  async attachmentsOfMessages(messageIds: string[], ex: Executor<MailboxDb> = this.db): Promise<Map<string, AttachmentRow[]>> {
    const out = new Map<string, AttachmentRow[]>();
    if (!messageIds.length) return out;
    const rows = await ex.selectFrom('attachments').selectAll().where('message_id', 'in', messageIds).orderBy('position').execute();
    for (const r of rows) out.set(r.message_id, [...(out.get(r.message_id) ?? []), r]);
    return out;
  }

  findAttachment(t: Tenant, messageId: string, attachmentId: string, ex: Executor<MailboxDb> = this.db): Promise<AttachmentRow | undefined> {
    return ex.selectFrom('attachments').selectAll().where('org_id', '=', t.org_id).where('message_id', '=', messageId).where('id', '=', attachmentId).executeTakeFirst();
  }

  labelCounts(t: Tenant, ex: Executor<MailboxDb> = this.db): Promise<{ label: string; message_count: number }[]> {
    return ex
      .selectFrom('message_labels as l')
      .innerJoin('messages as m', 'm.id', 'l.message_id')
      .innerJoin('inboxes as i', 'i.id', 'm.inbox_id')
      .select(['l.label', (eb) => eb.fn.countAll<number>().as('message_count')])
      .where('l.org_id', '=', t.org_id)
      .where('l.env_id', '=', t.env_id)
      .where('i.deleted_at', 'is', null)
      .groupBy('l.label')
      .orderBy('l.label')
      .execute();
  }
}
