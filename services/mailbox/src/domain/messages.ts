/** Reading messages and threads, downloads, and labels, as a tenant sees them. */
import { z } from 'zod';
import { AppError,
  CLIENT_ADDABLE_SYSTEM_LABELS,
  SYSTEM_LABELS,
  pageCursor,
  encodePageToken,
  type Message,
  type Tenant,
} from '@mailroom/contracts';
import type { InboxRepository } from '../repo/inbox.repository';
import type { AttachmentRow, MessageRepository, MessageRow, ThreadRow, TimeCursor } from '../repo/message.repository';
import type { MailboxTx } from '../repo/tables';
import type { ReceivedRaws, Transact } from './ports';

const cursorSchema = z.object({ at: z.iso.datetime({ precision: 3 }), id: z.string().min(1).max(40) });
const labelCursor = z.object({ after: z.string().min(1).max(200) });
const PREVIEW_LENGTH = 200;

function decodeCursor(token: string | undefined): TimeCursor | undefined {
  const c = pageCursor(token, cursorSchema);
  return c && { at: new Date(c.at), id: c.id };
}

function nextToken<T>(rows: T[], limit: number, key: (row: T) => TimeCursor): string | null {
  const last = rows[limit - 1];
  return rows.length > limit && last ? encodePageToken({ at: key(last).at.toISOString(), id: key(last).id }) : null;
}

export function preview(text: string | null): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  if (flat.length <= PREVIEW_LENGTH) return flat;
  // Cut between characters, not inside a surrogate pair (𝕏): half of one is no text PostgreSQL takes.
  const cut = flat.slice(0, PREVIEW_LENGTH - 1);
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

function toMessage(row: MessageRow, labels: string[], attachments: AttachmentRow[]): Message {
  return {
    message_id: row.id,
    thread_id: row.thread_id,
    inbox_id: row.inbox_id,
    from_address: row.from_address,
    to_addresses: row.to_addresses,
    cc_addresses: row.cc_addresses,
    subject: row.subject,
    ...(row.extracted_text === null ? {} : { extracted_text: row.extracted_text }),
    ...(row.extracted_html === null ? {} : { extracted_html: row.extracted_html }),
    text_body: row.text_body,
    html_body: row.html_body,
    labels,
    attachments: attachments.map((a) => ({ attachment_id: a.id, filename: a.filename, content_type: a.content_type, size: a.size })),
    in_reply_to: row.in_reply_to,
    references: row.references,
    created_at: row.created_at.toISOString(),
    received_at: row.received_at.toISOString(),
    auth: row.auth,
    spam: row.spam,
  };
}

const SYSTEM = new Set<string>(SYSTEM_LABELS);
const ADDABLE = new Set<string>(CLIENT_ADDABLE_SYSTEM_LABELS);

function checkLabels(labels: string[], op: 'add' | 'remove'): void {
  const refused = labels.filter((l) => SYSTEM.has(l) && (op === 'remove' || !ADDABLE.has(l)));
  if (refused.length) {
    throw new AppError('invalid_request', `system labels cannot be ${op === 'add' ? 'added' : 'removed'}: ${refused.join(', ')}`, {
      details: refused.map((l) => ({ path: 'labels', message: `${l} is a system label` })),
    });
  }
}

export class Messages {
  constructor(
    private readonly transact: Transact,
    private readonly repo: MessageRepository,
    private readonly inboxes: InboxRepository,
    private readonly received: ReceivedRaws,
  ) {}

  /** Lists of an inbox that is not the tenant's, or deleted, are a 404 like the inbox itself (read beside the list). */
  private async ofLiveInbox<T>(t: Tenant, inboxId: string, list: Promise<T>): Promise<T> {
    const [inbox, rows] = await Promise.all([this.inboxes.find(t, inboxId), list]);
    if (!inbox) throw AppError.notFound('inbox');
    return rows;
  }

  private async present(rows: MessageRow[]): Promise<Message[]> {
    const ids = rows.map((r) => r.id);
    const [labels, attachments] = await Promise.all([this.repo.labelsOfMessages(ids), this.repo.attachmentsOfMessages(ids)]);
    return rows.map((r) => toMessage(r, labels.get(r.id) ?? [], attachments.get(r.id) ?? []));
  }

  private async mustFind(t: Tenant, inboxId: string, messageId: string): Promise<MessageRow> {
    const row = await this.repo.findMessage(t, messageId, inboxId);
    if (!row) throw AppError.notFound('message');
    return row;
  }

  async get(t: Tenant, inboxId: string, messageId: string): Promise<Message> {
    const [message] = await this.present([await this.mustFind(t, inboxId, messageId)]);
    return message!;
  }

  async list(t: Tenant, q: { inbox_id: string; limit: number; page_token?: string | undefined; label?: string | undefined; before?: string | undefined; after?: string | undefined }) {
    const rows = await this.ofLiveInbox(
      t,
      q.inbox_id,
      this.repo.listMessages(t, {
        inboxId: q.inbox_id,
        limit: q.limit + 1,
        cursor: decodeCursor(q.page_token),
        label: q.label,
        before: q.before ? new Date(q.before) : undefined,
        after: q.after ? new Date(q.after) : undefined,
      }),
    );
    const page = rows.slice(0, q.limit);
    const ids = page.map((r) => r.id);
    const labels = await this.repo.labelsOfMessages(ids);
    return {
      data: page.map((r) => ({
        message_id: r.id,
        thread_id: r.thread_id,
        inbox_id: r.inbox_id,
        from_address: r.from_address,
        to_addresses: r.to_addresses,
        cc_addresses: r.cc_addresses,
        subject: r.subject,
        preview: preview(r.extracted_text ?? r.text_body),
        has_attachments: r.has_attachments,
        labels: labels.get(r.id) ?? [],
        created_at: r.created_at.toISOString(),
        received_at: r.received_at.toISOString(),
      })),
      next_page_token: nextToken(rows, q.limit, (r) => ({ at: r.received_at, id: r.id })),
    };
  }

  async raw(t: Tenant, inboxId: string, messageId: string) {
    const row = await this.mustFind(t, inboxId, messageId);
    // What was sent is in mail-send's bucket; what was received in mail-ingest's, or in
    // mailbox's when it came inside its work item.
    const bucket = row.direction === 'outbound' ? ('sent' as const) : (await this.received.has(row.raw_id)) ? ('received' as const) : ('raw' as const);
    return { bucket, object: row.raw_id, content_type: 'message/rfc822', filename: `${row.id}.eml`, size: row.raw_size };
  }

  async attachment(t: Tenant, inboxId: string, messageId: string, attachmentId: string) {
    await this.mustFind(t, inboxId, messageId);
    const a = await this.repo.findAttachment(t, messageId, attachmentId);
    if (!a) throw AppError.notFound('attachment');
    return { bucket: 'attachments' as const, object: a.object_name, content_type: a.content_type, filename: a.filename, size: a.size };
  }

  private async presentThreads(rows: ThreadRow[]) {
    const labels = await this.repo.labelsOfThreads(rows.map((r) => r.id));
    return rows.map((r) => ({
      thread_id: r.id,
      inbox_id: r.inbox_id,
      subject: r.subject,
      message_count: r.message_count,
      labels: labels.get(r.id) ?? [],
      preview: r.preview,
      last_message_at: r.last_message_at.toISOString(),
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    }));
  }

  async threads(t: Tenant, q: { inbox_id: string; limit: number; page_token?: string | undefined; label?: string | undefined }) {
    const rows = await this.ofLiveInbox(t, q.inbox_id, this.repo.listThreads(t, { inboxId: q.inbox_id, limit: q.limit + 1, cursor: decodeCursor(q.page_token), label: q.label }));
    return { data: await this.presentThreads(rows.slice(0, q.limit)), next_page_token: nextToken(rows, q.limit, (r) => ({ at: r.last_message_at, id: r.id })) };
  }

  async thread(t: Tenant, inboxId: string, threadId: string) {
    const row = await this.repo.findThread(t, threadId, inboxId);
    if (!row) throw AppError.notFound('thread');
    const [[summary], messages] = await Promise.all([this.presentThreads([row]), this.repo.messagesOfThread(t, threadId).then((m) => this.present(m))]);
    return { ...summary!, messages };
  }

  // ---- labels

  async labelMessage(t: Tenant, messageId: string, labels: string[], op: 'add' | 'remove') {
    checkLabels(labels, op);
    const row = await this.repo.findMessage(t, messageId);
    if (!row) throw AppError.notFound('message');
    await this.apply(t, [row], labels, op);
    return { message_id: row.id, labels: (await this.repo.labelsOfMessages([row.id])).get(row.id) ?? [] };
  }

  async labelThread(t: Tenant, threadId: string, labels: string[], op: 'add' | 'remove') {
    checkLabels(labels, op);
    const thread = await this.repo.findThread(t, threadId);
    if (!thread) throw AppError.notFound('thread');
    await this.apply(t, await this.repo.messagesOfThread(t, threadId), labels, op);
    return { thread_id: thread.id, labels: (await this.repo.labelsOfThreads([thread.id])).get(thread.id) ?? [] };
  }

  async batch(t: Tenant, req: { message_ids: string[]; add?: string[] | undefined; remove?: string[] | undefined }) {
    const add = req.add ?? [];
    const remove = req.remove ?? [];
    if (!add.length && !remove.length) throw new AppError('invalid_request', 'give labels to add, to remove, or both');
    const overlap = add.filter((l) => remove.includes(l));
    if (overlap.length) throw new AppError('invalid_request', `labels both added and removed: ${overlap.join(', ')}`);
    checkLabels(add, 'add');
    checkLabels(remove, 'remove');
    const found = await this.repo.findMessages(t, [...new Set(req.message_ids)]);
    await this.transact(async (trx) => {
      await this.apply(t, found, add, 'add', trx);
      await this.apply(t, found, remove, 'remove', trx);
    });
    const foundIds = new Set(found.map((m) => m.id));
    return { updated: found.length, not_found: req.message_ids.filter((id) => !foundIds.has(id)) };
  }

  private async apply(t: Tenant, rows: Pick<MessageRow, 'id' | 'thread_id'>[], labels: string[], op: 'add' | 'remove', ex?: MailboxTx) {
    if (op === 'add') {
      await this.repo.addLabels(rows.flatMap((m) => labels.map((label) => ({ message_id: m.id, label, org_id: t.org_id, env_id: t.env_id, thread_id: m.thread_id }))), ex);
    } else {
      await this.repo.removeLabels(rows.map((m) => m.id), labels, ex);
    }
  }

  /** Labels in use, by name; a page ends after `limit`, the next starts after its last label. */
  async labelList(t: Tenant, q: { limit: number; page_token?: string | undefined }) {
    const after = pageCursor(q.page_token, labelCursor)?.after;
    const rows = await this.repo.labelCounts(t, { limit: q.limit + 1, after });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      data: page.map((r) => ({ label: r.label, message_count: Number(r.message_count), system: SYSTEM.has(r.label) })),
      next_page_token: rows.length > q.limit && last ? encodePageToken({ after: last.label }) : null,
    };
  }
}

