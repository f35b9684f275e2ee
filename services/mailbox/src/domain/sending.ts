/**
 * Sending from an inbox: replies, reply-all, forwards and new messages. A message is stored
 * at once (label `sent`; in the thread it answers, or a new one) and its send job written
 * in the same transaction (outbox -> mail.outbound), so a stored message is always sent and
 * a refused one is never stored. mail-send checks each send first (suppression list, rate,
 * paused inbox) and announces a refusal itself. Attachment bytes live in the attachments
 * bucket before the message refers to them; a forward refers to the original's objects.
 */
import { AppError, MAX_ATTACHMENT_BYTES, MAX_RECIPIENTS, newId, type OutboundJob, type SendAttachment, type SendCheckRequest, type Tenant } from '@mailroom/contracts';
import { Batched, type Clock } from '@mailroom/platform';
import { createHash } from 'node:crypto';
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import type { InboxRepository, InboxRow } from '../repo/inbox.repository';
import type { AttachmentRow, MessageRepository, MessageRow, NewMessage } from '../repo/message.repository';
import type { UploadRow } from '../repo/upload.repository';
import type { SendRequestRepository } from '../repo/send-request.repository';
import type { Uploads } from './uploads';
import type { EventSink } from './ports';
import { extractHtml } from './extract-html';
import { preview } from './messages';
import { normalizeSubject } from './threading';

export interface SendCheck {
  check(req: SendCheckRequest): Promise<void>;
}

export interface AttachmentStore {
  put(objectName: string, content: Uint8Array): Promise<void>;
  /** Copies an upload (object of MAIL_UPLOADS) into the attachments bucket, streamed; the MD5 of its bytes, hex. */
  copyUpload(upload: string, objectName: string): Promise<string>;
}

/** A file to attach that the message does not hold yet: bytes given inline, or an upload by id. */
type NewFile = { kind: 'inline'; filename: string; content_type: string; bytes: Buffer } | { kind: 'upload'; row: UploadRow };

const sizeOf = (f: NewFile) => (f.kind === 'inline' ? f.bytes.length : f.row.size);

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
  uploads: NewFile[];
  headers: Record<string, string>;
}

type Body = { text_body: string; html_body?: string | undefined; attachments?: SendAttachment[] | undefined };

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
    private readonly uploads: Uploads,
    /** SEND_MAX_MESSAGE_BYTES: bodies and attachments, decoded, together. */
    private readonly maxMessageBytes: number,
    private readonly requests: SendRequestRepository,
  ) {}

  /**
   * The files of a request: inline ones decoded (at most MAX_ATTACHMENT_BYTES in all: they
   * cross the bus inside the request), uploads resolved for this tenant (404, 410). The
   * message, with `held` bytes it carries already (a forward's), must fit in
   * maxMessageBytes: else 413 naming the limit, before anything is stored or counted.
   */
  private async files(t: Tenant, list: SendAttachment[] | undefined, bodies: string[], held: number): Promise<NewFile[]> {
    const inline: NewFile[] = [];
    const refs: string[] = [];
    const order: ({ inline: number } | { ref: number })[] = [];
    for (const a of list ?? []) {
      // The gateway fetches files given by URL and passes them on as uploads.
      if ('url' in a) throw new AppError('invalid_request', 'attachments given by url are fetched by the gateway; this request did not come through it', { details: [{ path: 'attachments', message: 'url not resolved' }] });
      if ('attachment_id' in a) order.push({ ref: refs.push(a.attachment_id) - 1 });
      else order.push({ inline: inline.push({ kind: 'inline', filename: a.filename, content_type: a.content_type ?? detectMimeType(a.filename), bytes: Buffer.from(a.content_base64, 'base64') }) - 1 });
    }
    const inlineTotal = inline.reduce((n, f) => n + sizeOf(f), 0);
    if (inlineTotal > MAX_ATTACHMENT_BYTES) {
      throw new AppError('payload_too_large', `attachments given as content_base64 come to ${inlineTotal} bytes; at most ${MAX_ATTACHMENT_BYTES} bytes in all can be sent inline: upload larger files with POST /api/v1/attachments and refer to them by attachment_id`);
    }
    const uploaded = (await this.uploads.resolve(t, refs)).map((row): NewFile => ({ kind: 'upload', row }));
    const files = order.map((o) => ('ref' in o ? uploaded[o.ref]! : inline[o.inline]!));
    const total = held + bodies.reduce((n, b) => n + Buffer.byteLength(b), 0) + files.reduce((n, f) => n + sizeOf(f), 0);
    if (total > this.maxMessageBytes) {
      throw new AppError('payload_too_large', `the message comes to ${total} bytes (bodies and attachments); at most ${this.maxMessageBytes} bytes can be sent (SEND_MAX_MESSAGE_BYTES)`);
    }
    return files;
  }

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

  async reply(t: Tenant, inboxId: string, messageId: string, body: Body, requestKey?: string) {
    const { inbox, original } = await this.context(t, inboxId, messageId);
    const to = replyRecipients(original!);
    if (!to.length) throw new AppError('unprocessable', 'the message has no address to reply to (no From or Reply-To)');
    const uploads = await this.files(t, body.attachments, [body.text_body, body.html_body ?? ''], 0);
    return this.submit(t, inbox, { ...this.answering(original!), to, cc: [], bcc: [], subject: replySubject(original!.subject), text: body.text_body, html: body.html_body ?? null, attachments: [], uploads, headers: {} }, requestKey);
  }

  async replyAll(t: Tenant, inboxId: string, messageId: string, body: Body, requestKey?: string) {
    const { inbox, original } = await this.context(t, inboxId, messageId);
    const self = new Set([inbox.address]);
    const to = unique(replyRecipients(original!), self);
    if (!to.length) throw new AppError('unprocessable', 'the message has no address to reply to (no From or Reply-To)');
    const cc = unique(original!.direction === 'outbound' ? original!.cc_addresses : [...original!.to_addresses, ...original!.cc_addresses], new Set([...self, ...to])).slice(0, MAX_RECIPIENTS - to.length);
    const uploads = await this.files(t, body.attachments, [body.text_body, body.html_body ?? ''], 0);
    return this.submit(t, inbox, { ...this.answering(original!), to, cc, bcc: [], subject: replySubject(original!.subject), text: body.text_body, html: body.html_body ?? null, attachments: [], uploads, headers: {} }, requestKey);
  }

  async forward(t: Tenant, inboxId: string, messageId: string, body: { to: string[]; text_body?: string | undefined; attachments?: SendAttachment[] | undefined }, requestKey?: string) {
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
    const text = body.text_body ? `${body.text_body}\n\n${quoted}` : quoted;
    const uploads = await this.files(t, body.attachments, [text], attachments.reduce((n, a) => n + a.size, 0));
    return this.submit(t, inbox, {
      ...this.answering(o),
      to: unique(body.to, new Set()),
      cc: [],
      bcc: [],
      subject: forwardSubject(o.subject),
      text,
      html: null,
      attachments: attachments.map((a: AttachmentRow) => ({ object: a.object_name, filename: a.filename, content_type: a.content_type, content_id: a.content_id, size: a.size, checksum: a.checksum })),
      uploads,
      headers: {},
    }, requestKey);
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
      attachments?: SendAttachment[] | undefined;
      headers?: Record<string, string> | undefined;
    },
    requestKey?: string,
  ) {
    const { inbox } = await this.context(t, inboxId);
    const uploads = await this.files(t, req.attachments, [req.subject, req.text_body ?? '', req.html_body ?? ''], 0);
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
    }, requestKey);
  }

  /**
   * `requestKey`: the gateway's key of the request's Idempotency-Key. A call retried after its
   * answer was lost (the gateway answers 5xx, keeps nothing, and the client sends the same
   * key again) gets the first try's ids, and the message, stored once per (inbox, raw id),
   * is not made and sent twice: found stored, it is answered as it is.
   */
  private async submit(t: Tenant, inbox: InboxRow, d: Draft, requestKey?: string): Promise<{ message_id: string; thread_id: string }> {
    const now = this.clock.now();
    let id: string = newId('message');
    let rawId: string = newId('raw');
    let threadId: string = d.threadId ?? newId('thread');
    if (requestKey !== undefined) {
      ({ message_id: id, raw_id: rawId, thread_id: threadId } = await this.requests.claim(t, requestKey, { message_id: id, raw_id: rawId, thread_id: threadId }, now));
      if (await this.requests.stored(inbox.id, rawId)) return { message_id: id, thread_id: threadId };
    }
    const uploaded: Attachment[] = d.uploads.map((u, i) => ({
      object: `${rawId}.${i}`,
      filename: u.kind === 'inline' ? u.filename : u.row.filename,
      content_type: u.kind === 'inline' ? u.content_type : u.row.content_type,
      content_id: null,
      size: sizeOf(u),
      // An upload's is known once it is copied (below).
      checksum: u.kind === 'inline' ? createHash('md5').update(u.bytes).digest('hex') : '',
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
    await this.checks.check({ org_id: t.org_id, env_id: t.env_id, inbox_id: inbox.id, inbox_status: inbox.status, from_address: inbox.address, to_addresses: [...d.to, ...d.cc, ...d.bcc], subject: d.subject, message_id: id });
    // Uploaded bytes are stored before anything refers to them.
    for (const [i, u] of d.uploads.entries()) {
      if (u.kind === 'inline') await this.attachmentStore.put(uploaded[i]!.object, u.bytes);
      else uploaded[i]!.checksum = await this.attachmentStore.copyUpload(u.row.id, uploaded[i]!.object);
    }
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
    // A try of the same request at the same time stored it first; otherwise unreachable: the raw id is new.
    if (!inserted && requestKey !== undefined) return { message_id: id, thread_id: threadId };
    if (!inserted) throw new Error(`outbound message ${id} was not stored`);
    this.outbox.kick();
    return { message_id: id, thread_id: threadId };
  }
}
