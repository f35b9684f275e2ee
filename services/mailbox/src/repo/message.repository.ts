/**
 * Messages, threads, attachments and labels. Reads are scoped to a tenant (org and
 * environment) and to live inboxes; writes of inbound mail happen in the consumer's
 * transaction.
 */
import type { Tenant } from '@mailroom/contracts';
import { sql, type Executor, type Insertable, type Kysely, type Selectable } from '@mailroom/db';
import type { OutboxRow } from '@mailroom/platform';
import type { InboxRow } from './inbox.repository';
import type { AttachmentTable, MailboxDb, MessageTable, ThreadTable } from './tables';

export type MessageRow = Selectable<MessageTable>;
export type ThreadRow = Selectable<ThreadTable>;
export type AttachmentRow = Selectable<AttachmentTable>;

/**
 * PostgreSQL's text cannot hold NUL (U+0000), which mail can carry (8bit bodies, encoded
 * words, filenames): a statement with one fails, and the message would never be stored. It
 * is dropped from what is stored as text; the raw message keeps every byte.
 */
const textOnly = (_key: string, value: unknown): unknown => (typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '') : value);
/** The same for a JSON document stored as jsonb, whose strings arrive escaped. */
function withoutNul(json: string): string {
  return json.includes('\\u0000') ? JSON.stringify(JSON.parse(json), textOnly) : json;
}

/** A message to store, with what goes with it (see insertMessages). */
export interface NewMessage {
  message: Insertable<MessageTable> & { id: string; thread_id: string; received_at: Date };
  thread: { create: true; row: Insertable<ThreadTable> & { preview: string } } | { create: false; preview: string };
  attachments: Omit<Insertable<AttachmentTable>, 'message_id'>[];
  labels: string[];
  outbox: OutboxRow | null;
}

/** Newest first, paging on (time, id). */
export interface TimeCursor {
  at: Date;
  id: string;
}

export class MessageRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  // ---- inbound writes

  /**
   * Which of `inboxIds` hold the raw message already. Asked per inbox: (inbox_id, raw_id) is
   * the unique index; raw_id alone is no index's first column, and a lookup by it alone
   * reads every message (510 us per inbound message in bench:ingest, growing with the table).
   */
  inboxesHoldingRaw(rawId: string, inboxIds: string[], ex: Executor<MailboxDb> = this.db): Promise<{ inbox_id: string }[]> {
    if (!inboxIds.length) return Promise.resolve([]);
    return ex.selectFrom('messages').select('inbox_id').where('inbox_id', 'in', inboxIds).where('raw_id', '=', rawId).execute();
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
   * Stores messages, inbound or outbound, in one statement (atomic without a transaction, one
   * round trip): each message, unless its inbox already holds its raw message; then, for
   * those inserted only, their new threads or their threads' counters (several messages of a
   * thread count once per thread: its newest gives the preview), attachments, labels and
   * outbox rows (message.received, or the outbound send's work item). Returns, per message,
   * whether it was inserted. Foreign keys are checked at the end of the statement, so a
   * message may name the thread inserted beside it. A batch cannot both create a thread and
   * add to it (the update would not see the row the same statement inserts): refused.
   */
  async insertMessages(items: NewMessage[], ex: Executor<MailboxDb> = this.db): Promise<boolean[]> {
    const created = new Set(items.flatMap((i) => (i.thread.create ? [i.message.thread_id] : [])));
    if (items.some((i) => !i.thread.create && created.has(i.message.thread_id))) throw new Error('a batch of messages both creates a thread and adds to it');
    const now = new Date();
    const messages = items.map(({ message: m, thread }, pos) => ({
      ...m,
      auth: withoutNul(m.auth),
      spam: withoutNul(m.spam),
      references: m.references ?? [],
      reply_to: m.reply_to ?? [],
      to_addresses: m.to_addresses ?? [],
      cc_addresses: m.cc_addresses ?? [],
      preview: thread.create ? thread.row.preview : thread.preview,
      new_thread: thread.create,
      thread_subject: thread.create ? thread.row.subject : null,
      normalized_subject: thread.create ? thread.row.normalized_subject : null,
      pos,
    }));
    const attachments = items.flatMap((i) => i.attachments.map((a) => ({ ...a, message_id: i.message.id })));
    const labels = items.flatMap((i) => i.labels.map((label) => ({ message_id: i.message.id, label })));
    const outbox = items.flatMap((i) => (i.outbox ? [{ ...i.outbox, message_id: i.message.id }] : []));
    const { rows } = await sql<{ id: string }>`
      with x as (
        select * from jsonb_to_recordset(${JSON.stringify(messages, textOnly)}::jsonb) as x(id text, org_id text, env_id text, inbox_id text, thread_id text,
          direction text, raw_id text, raw_size int, message_id_header text, in_reply_to text, "references" text[], from_address text, from_name text,
          reply_to text[], to_addresses text[], cc_addresses text[], subject text, text_body text, html_body text, extracted_text text, extracted_html text,
          has_attachments boolean, auth text, spam text, mail_from text, parse_error text, received_at timestamptz,
          preview text, new_thread boolean, thread_subject text, normalized_subject text, pos int)
      ),
      m as (
        insert into messages (id, org_id, env_id, inbox_id, thread_id, direction, raw_id, raw_size, message_id_header, in_reply_to, "references",
          from_address, from_name, reply_to, to_addresses, cc_addresses, subject, text_body, html_body, extracted_text, extracted_html, has_attachments,
          auth, spam, mail_from, parse_error, received_at, created_at)
        select id, org_id, env_id, inbox_id, thread_id, direction, raw_id, raw_size, message_id_header, in_reply_to, "references",
          from_address, from_name, reply_to, to_addresses, cc_addresses, subject, text_body, html_body, extracted_text, extracted_html, has_attachments,
          auth::jsonb, spam::jsonb, mail_from, parse_error, received_at, ${now}
        from x order by pos
        on conflict (inbox_id, raw_id) do nothing
        returning id
      ),
      mx as (
        select x.* from x where x.id in (select id from m)
      ),
      new_thread as (
        insert into threads (id, org_id, env_id, inbox_id, subject, normalized_subject, message_count, preview, last_message_at, created_at, updated_at)
        select thread_id, org_id, env_id, inbox_id, thread_subject, normalized_subject, 1, preview, received_at, ${now}, ${now}
        from mx where new_thread
      ),
      old_thread as (
        update threads set message_count = threads.message_count + u.n,
          preview = case when u.last_at >= threads.last_message_at then u.preview else threads.preview end,
          last_message_at = greatest(threads.last_message_at, u.last_at),
          updated_at = ${now}
        from (
          select thread_id, count(*)::int as n, max(received_at) as last_at, (array_agg(preview order by received_at desc, pos desc))[1] as preview
          from mx where not new_thread group by thread_id
        ) u
        -- = any: the threads by primary key (joined on u alone, the plan can be a scan).
        where threads.id = u.thread_id and threads.id = any(${messages.map((m) => m.thread_id)}::text[])
      ),
      att as (
        insert into attachments (id, message_id, org_id, filename, content_type, size, content_id, disposition, checksum, position, object_name)
        select a.id, a.message_id, a.org_id, a.filename, a.content_type, a.size, a.content_id, a.disposition, a.checksum, a.position, a.object_name
        from jsonb_to_recordset(${JSON.stringify(attachments, textOnly)}::jsonb) as a(id text, message_id text, org_id text, filename text, content_type text,
          size int, content_id text, disposition text, checksum text, position int, object_name text)
        where a.message_id in (select id from m)
      ),
      lbl as (
        insert into message_labels (message_id, label, org_id, env_id, thread_id)
        select mx.id, l.label, mx.org_id, mx.env_id, mx.thread_id
        from jsonb_to_recordset(${JSON.stringify(labels)}::jsonb) as l(message_id text, label text) join mx on mx.id = l.message_id
      ),
      evt as (
        insert into outbox (id, subject, payload, traceparent)
        select o.id, o.subject, o.payload, o.traceparent from jsonb_to_recordset(${JSON.stringify(outbox)}::jsonb) as o(message_id text, id text, subject text, payload text, traceparent text)
        where o.message_id in (select id from m)
      )
      select id from m`.execute(ex);
    const inserted = new Set(rows.map((r) => r.id));
    return items.map((i) => inserted.has(i.message.id));
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

  labelCounts(t: Tenant, page: { limit: number; after?: string | undefined }, ex: Executor<MailboxDb> = this.db): Promise<{ label: string; message_count: number }[]> {
    let q = ex
      .selectFrom('message_labels as l')
      .innerJoin('messages as m', 'm.id', 'l.message_id')
      .innerJoin('inboxes as i', 'i.id', 'm.inbox_id')
      .select(['l.label', (eb) => eb.fn.countAll<number>().as('message_count')])
      .where('l.org_id', '=', t.org_id)
      .where('l.env_id', '=', t.env_id)
      .where('i.deleted_at', 'is', null);
    if (page.after !== undefined) q = q.where('l.label', '>', page.after);
    return q.groupBy('l.label').orderBy('l.label').limit(page.limit).execute();
  }
}
