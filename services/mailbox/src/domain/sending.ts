/**
 * Sending from an inbox: replies, reply-all, forwards and new messages. A message is stored
 * at once (label `sent`; in the thread it answers, or a new one) and its send job written
 * in the same transaction (outbox -> mail.outbound), so a stored message is always sent and
 * a refused one is never stored. mail-send checks each send first (suppression list, rate,
 * paused inbox) and announces a refusal itself. Attachment bytes live in the attachments
 * bucket before the message refers to them; a forward refers to the original's objects.
 */
import { AppError, MAX_ATTACHMENT_BYTES, MAX_RECIPIENTS, newId, type OutboundJob, type SendCheckRequest, type Tenant } from '@mailroom/contracts';
import { Batched, type Clock } from '@mailroom/platform';
import { createHash } from 'node:crypto';
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import type { InboxRepository, InboxRow } from '../repo/inbox.repository';
import type { AttachmentRow, MessageRepository, MessageRow, NewMessage } from '../repo/message.repository';
import type { EventSink } from './ports';
import { extractHtml } from './extract-html';
import { preview } from './messages';
import { normalizeSubject } from './threading';

export interface SendCheck {
  check(req: SendCheckRequest): Promise<void>;
}

export interface AttachmentStore {
  put(objectName: string, content: Uint8Array): Promise<void>;
}

/** "Re: " once: a subject that already starts with a reply prefix is kept as it is. */
export function replySubject(subject: string): string {
  return /^\s*re\s*(\[\d+\])?\s*:/i.test(subject) ? subject.trim() : `Re: ${subject.trim()}`.trim();
}

export function forwardSubject(subject: string): string {
  return /^\s*(fwd?|fw)\s*:/i.test(subject) ? subject.trim() : `Fwd: ${subject.trim()}`.trim();
}

/** Who a reply goes to: the Reply-To of the original, else its sender; our own sent message answers its recipients. */
export function replyRecipients(original: Pick<MessageRow, 'direction' | 'reply_to' | 'from_address' | 'to_addresses'>): string[] {
  if (original.direction === 'outbound') return original.to_addresses;
  return original.reply_to.length ? original.reply_to : original.from_address ? [original.from_address] : [];
}

const MAX_REFERENCES = 30;

interface Attachment {
  object: string;
  filename: string | null;
  content_type: string;
  content_id: string | null;
  size: number;
  checksum: string;
}

interface Draft {
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The thread it continues; null = a new thread. */
  threadId: string | null;
  inReplyTo: string | null;
  references: string[];
  attachments: Attachment[];
  uploads: { filename: string; content_type: string; bytes: Buffer }[];
  headers: Record<string, string>;
}

function unique(addresses: string[], except: Set<string>): string[] {
  const out: string[] = [];
  for (const a of addresses.map((x) => x.toLowerCase())) {
    if (!except.has(a) && !out.includes(a)) out.push(a);
  }
  return out;
}

export class Sending {
  /** Sends accepted at the same time are stored in one statement (see Batched). */
  private readonly storing = new Batched<NewMessage, boolean>((items) => this.messages.insertMessages(items));

  constructor(
    private readonly inboxes: InboxRepository,
    private readonly messages: MessageRepository,
    private readonly outbox: EventSink,
    private readonly checks: SendCheck,
    private readonly attachmentStore: AttachmentStore,
    private readonly clock: Clock,
  ) {}

  private async context(t: Tenant, inboxId: string, messageId?: string): Promise<{ inbox: InboxRow; original?: MessageRow }> {
    if (!messageId) {
      const inbox = await this.inboxes.find(t, inboxId);
      if (!inbox) throw AppError.notFound('inbox');
      return { inbox };
    }
    const found = await this.messages.findInboxWithMessage(t, inboxId, messageId);
    if (!found) throw AppError.notFound('inbox');
    if (!found.message) throw AppError.notFound('message');
    return { inbox: found.inbox, original: found.message };
  }

  private answering(original: MessageRow): Pick<Draft, 'threadId' | 'inReplyTo' | 'references'> {
    return {
      threadId: original.thread_id,
      inReplyTo: original.message_id_header,
      references: [...original.references, ...(original.message_id_header ? [original.message_id_header] : [])].slice(-MAX_REFERENCES),
    };
  }

  async reply(t: Tenant, inboxId: string, messageId: string, body: { text_body: string; html_body?: string | undefined }) {
    const { inbox, original } = await this.context(t, inboxId, messageId);
    const to = replyRecipients(original!);
    if (!to.length) throw new AppError('unprocessable', 'the message has no address to reply to (no From or Reply-To)');
    return this.submit(t, inbox, { ...this.answering(original!), to, cc: [], bcc: [], subject: replySubject(original!.subject), text: body.text_body, html: body.html_body ?? null, attachments: [], uploads: [], headers: {} });
  }

  async replyAll(t: Tenant, inboxId: string, messageId: string, body: { text_body: string; html_body?: string | undefined }) {
    const { inbox, original } = await this.context(t, inboxId, messageId);
    const self = new Set([inbox.address]);
    const to = unique(replyRecipients(original!), self);
    if (!to.length) throw new AppError('unprocessable', 'the message has no address to reply to (no From or Reply-To)');
    const cc = unique(original!.direction === 'outbound' ? original!.cc_addresses : [...original!.to_addresses, ...original!.cc_addresses], new Set([...self, ...to])).slice(0, MAX_RECIPIENTS - to.length);
    return this.submit(t, inbox, { ...this.answering(original!), to, cc, bcc: [], subject: replySubject(original!.subject), text: body.text_body, html: body.html_body ?? null, attachments: [], uploads: [], headers: {} });
  }

  async forward(t: Tenant, inboxId: string, messageId: string, body: { to: string[]; text_body?: string | undefined }) {
    const { inbox, original } = await this.context(t, inboxId, messageId);
    const o = original!;
    const quoted = [
      '---------- Forwarded message ---------',
      `From: ${o.from_name ? `${o.from_name} <${o.from_address}>` : o.from_address}`,
      `Date: ${o.received_at.toUTCString()}`,
      `Subject: ${o.subject}`,
      `To: ${o.to_addresses.join(', ')}`,
      ...(o.cc_addresses.length ? [`Cc: ${o.cc_addresses.join(', ')}`] : []),
      '',
      o.text_body || o.extracted_text || '',
    ].join('\n');
    const attachments = (await this.messages.attachmentsOfMessages([o.id])).get(o.id) ?? [];
    return this.submit(t, inbox, {
      ...this.answering(o),
      to: unique(body.to, new Set()),
      cc: [],
      bcc: [],
      subject: forwardSubject(o.subject),
      text: body.text_body ? `${body.text_body}\n\n${quoted}` : quoted,
      html: null,
      attachments: attachments.map((a: AttachmentRow) => ({ object: a.object_name, filename: a.filename, content_type: a.content_type, content_id: a.content_id, size: a.size, checksum: a.checksum })),
      uploads: [],
      headers: {},
    });
  }

  async send(
    t: Tenant,
    inboxId: string,
    req: {
      to: string[];
      cc?: string[] | undefined;
      bcc?: string[] | undefined;
      subject: string;
      text_body?: string | undefined;
      html_body?: string | undefined;
      attachments?: { filename: string; content_type?: string | undefined; content_base64: string }[] | undefined;
      headers?: Record<string, string> | undefined;
    },
  ) {
    const { inbox } = await this.context(t, inboxId);
    const uploads = (req.attachments ?? []).map((a) => ({ filename: a.filename, content_type: a.content_type ?? detectMimeType(a.filename), bytes: Buffer.from(a.content_base64, 'base64') }));
    const total = uploads.reduce((n, u) => n + u.bytes.length, 0);
    if (total > MAX_ATTACHMENT_BYTES) {
      throw new AppError('payload_too_large', `attachments come to ${total} bytes; at most ${MAX_ATTACHMENT_BYTES} bytes in all can be sent through this API`);
    }
    // Each address once: To first, then Cc, then Bcc.
    const to = unique(req.to, new Set());
    const cc = unique(req.cc ?? [], new Set(to));
    return this.submit(t, inbox, {
      to,
      cc,
      bcc: unique(req.bcc ?? [], new Set([...to, ...cc])),
      subject: req.subject,
      text: req.text_body ?? '',
      html: req.html_body ?? null,
      threadId: null,
      inReplyTo: null,
      references: [],
      attachments: [],
      uploads,
      headers: req.headers ?? {},
    });
  }

  private async submit(t: Tenant, inbox: InboxRow, d: Draft): Promise<{ message_id: string; thread_id: string }> {
    const now = this.clock.now();
    const id = newId('message');
    const rawId = newId('raw');
    const threadId = d.threadId ?? newId('thread');
    const uploaded: Attachment[] = d.uploads.map((u, i) => ({
      object: `${rawId}.${i}`,
      filename: u.filename,
      content_type: u.content_type,
      content_id: null,
      size: u.bytes.length,
      checksum: createHash('md5').update(u.bytes).digest('hex'),
    }));
    const attachments = [...d.attachments, ...uploaded];
    const job: OutboundJob = {
      message_id: id,
      thread_id: threadId,
      inbox_id: inbox.id,
      org_id: t.org_id,
      env_id: t.env_id,
      raw_id: rawId,
      message_id_header: `${id}@${inbox.domain}`,
      from: { address: inbox.address, name: inbox.display_name },
      to: d.to,
      cc: d.cc,
      bcc: d.bcc,
      subject: d.subject,
      text_body: d.text,
      html_body: d.html,
      in_reply_to: d.inReplyTo,
      references: d.references,
      attachments: attachments.map((a) => ({ object: a.object, filename: a.filename, content_type: a.content_type, content_id: a.content_id })),
      headers: d.headers,
      created_at: now.toISOString(),
    };
    // A work item the bus cannot carry is refused first (payload_too_large), before the
    // send is counted against its rate and before any upload is stored.
    const work = this.outbox.workRow('mail.outbound', id, job);
    await this.checks.check({ org_id: t.org_id, env_id: t.env_id, inbox_id: inbox.id, inbox_status: inbox.status, from_address: inbox.address, to_addresses: [...d.to, ...d.cc, ...d.bcc], subject: d.subject });
    // Uploaded bytes are stored before anything refers to them.
    for (const [i, u] of d.uploads.entries()) await this.attachmentStore.put(uploaded[i]!.object, u.bytes);
    const text = preview(d.text);
    // The message, its thread, attachments, label and the send's work item: one statement.
    const inserted = await this.storing.call({
      message: {
        id,
        org_id: t.org_id,
        env_id: t.env_id,
        inbox_id: inbox.id,
        thread_id: threadId,
        direction: 'outbound',
        raw_id: rawId,
        raw_size: 0,
        message_id_header: job.message_id_header,
        in_reply_to: d.inReplyTo,
        references: d.references,
        from_address: inbox.address,
        from_name: inbox.display_name,
        reply_to: [],
        to_addresses: d.to,
        cc_addresses: d.cc,
        subject: d.subject,
        text_body: d.text,
        html_body: d.html ?? '',
        extracted_text: d.text,
        extracted_html: d.html ? extractHtml(d.html) : null,
        has_attachments: attachments.length > 0,
        auth: JSON.stringify({ spf: { result: 'none' }, dkim: { result: 'none' }, dmarc: { result: 'none' }, arc: { result: 'none' } }),
        spam: JSON.stringify({ score: null, verdict: 'unscanned' }),
        mail_from: '',
        parse_error: null,
        received_at: now,
      },
      thread: d.threadId
        ? { create: false, preview: text }
        : { create: true, row: { id: threadId, org_id: t.org_id, env_id: t.env_id, inbox_id: inbox.id, subject: d.subject, normalized_subject: normalizeSubject(d.subject), last_message_at: now, preview: text } },
      attachments: attachments.map((a, i) => ({ id: newId('attachment'), org_id: t.org_id, filename: a.filename, content_type: a.content_type, size: a.size, content_id: a.content_id, disposition: 'attachment', checksum: a.checksum, position: i, object_name: a.object })),
      labels: ['sent'],
      outbox: work,
    });
    // Unreachable: the raw id is new, so the inbox cannot hold it yet.
    if (!inserted) throw new Error(`outbound message ${id} was not stored`);
    this.outbox.kick();
    return { message_id: id, thread_id: threadId };
  }
}
