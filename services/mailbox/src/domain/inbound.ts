/**
 * Storing accepted inbound mail: one work item of `mail.inbound` (one SMTP transaction,
 * raw bytes already in the MAIL_RAW bucket) becomes one message per recipient inbox,
 * threaded, labelled, and announced as message.received through the outbox, all in one
 * statement per inbox. Idempotent: a redelivered item finds its messages stored
 * (unique inbox + raw id) and changes nothing. Spam is stored with label `spam` and not
 * announced.
 */
import { AppError, newId, type EnvelopeOf, type InboundMail } from '@mailroom/contracts';
import type { Clock, Logger, OutboxRow } from '@mailroom/platform';
import type { InboxRepository } from '../repo/inbox.repository';
import type { MessageRepository } from '../repo/message.repository';
import type { ParsedMail } from '../parsing/parsed-mail';
import { preview } from './messages';
import type { EventSink } from './ports';
import { normalizeSubject, parentIds, subjectsAgree } from './threading';

export interface RawStore {
  /** The raw message, or null when the object does not exist. */
  get(rawId: string): Promise<Uint8Array | null>;
  /** Stores (or stores again: same name, same bytes) a raw message that came inside its work item (in MAIL_RECEIVED, mailbox's own bucket). */
  put(rawId: string, raw: Uint8Array): Promise<void>;
}

export interface AttachmentStore {
  put(objectName: string, content: Uint8Array): Promise<void>;
}

export interface Parser {
  parse(raw: Uint8Array): Promise<ParsedMail>;
}

export type StoreOutcome = { stored: number; skipped: number } | { missingRaw: true };

/** PostgreSQL text cannot hold NUL; the raw message keeps every byte, the parsed fields drop them. */
export function withoutNul(parsed: ParsedMail): ParsedMail {
  const clean = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '') : s);
  const cleanNullable = (s: string | null) => (s === null ? null : clean(s));
  const address = (a: { address: string; name: string }) => ({ address: clean(a.address), name: clean(a.name) });
  return {
    ...parsed,
    subject: clean(parsed.subject),
    message_id: cleanNullable(parsed.message_id),
    in_reply_to: cleanNullable(parsed.in_reply_to),
    references: parsed.references.map(clean),
    from: parsed.from && address(parsed.from),
    reply_to: parsed.reply_to.map(address),
    to: parsed.to.map(address),
    cc: parsed.cc.map(address),
    text: clean(parsed.text),
    html: clean(parsed.html),
    extracted_text: cleanNullable(parsed.extracted_text),
    extracted_html: cleanNullable(parsed.extracted_html),
    attachments: parsed.attachments.map((a) => ({ ...a, filename: cleanNullable(a.filename), content_type: clean(a.content_type), content_id: cleanNullable(a.content_id), disposition: cleanNullable(a.disposition) })),
  };
}

function isAuthenticated(auth: InboundMail['auth']): boolean {
  return auth.spf.result === 'pass' || auth.dkim.result === 'pass';
}

/**
 * message.received as the bus can carry it (the server's max_payload). Mail up to the SMTP
 * size limit can have more text than that: its extracted_text is cut to what fits (the
 * whole text is the message's, GET .../messages/{id}), then, in mail built to be absurd, its
 * subject and its To list. An event that could not be published would hold up every event
 * after it in the outbox.
 */
export function fitted(event: EnvelopeOf<'message.received'>, maxBytes: number): EnvelopeOf<'message.received'> {
  const size = (e: EnvelopeOf<'message.received'>) => Buffer.byteLength(JSON.stringify(e));
  if (size(event) <= maxBytes) return event;
  // The longest prefix of `value` (whole code points) with which the event fits.
  const cut = (value: string, withValue: (v: string) => EnvelopeOf<'message.received'>): EnvelopeOf<'message.received'> => {
    // No more characters than bytes can fit: the search runs over at most that many. (Whole
    // code points: a pair the slice cuts in two is one the search cannot reach, since the
    // whole slice never fits.)
    const points = Array.from(value.length > maxBytes ? value.slice(0, maxBytes) : value);
    let [lo, hi] = [0, points.length];
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (size(withValue(points.slice(0, mid).join(''))) <= maxBytes) lo = mid;
      else hi = mid - 1;
    }
    return withValue(points.slice(0, lo).join(''));
  };
  let e = cut(event.data.extracted_text, (v) => ({ ...event, data: { ...event.data, extracted_text: v } }));
  if (size(e) > maxBytes) e = cut(e.data.subject, (v) => ({ ...e, data: { ...e.data, subject: v } }));
  while (size(e) > maxBytes && e.data.to_addresses.length > 1) e = { ...e, data: { ...e.data, to_addresses: e.data.to_addresses.slice(0, Math.ceil(e.data.to_addresses.length / 2)) } };
  return e;
}

export class InboundStore {
  constructor(
    private readonly inboxes: InboxRepository,
    private readonly messages: MessageRepository,
    private readonly raw: RawStore,
    private readonly attachments: AttachmentStore,
    private readonly parser: Parser,
    private readonly outbox: EventSink,
    private readonly clock: Clock,
  ) {}

  /** `logging.log` is read only when something is logged (a consumer makes it on first use). */
  async store(item: InboundMail, logging: { readonly log: Logger }): Promise<StoreOutcome> {
    const done = new Set((await this.messages.inboxesHoldingRaw(item.raw_id, item.recipients.map((r) => r.inbox_id))).map((r) => r.inbox_id));
    const pending = item.recipients.filter((r) => !done.has(r.inbox_id));
    if (!pending.length) return { stored: 0, skipped: item.recipients.length };
    let raw: Uint8Array | null;
    if (item.raw !== undefined) {
      // Written before any message refers to it, so a stored message always has its raw bytes.
      raw = Buffer.from(item.raw, 'base64');
      await this.raw.put(item.raw_id, raw);
    } else {
      raw = await this.raw.get(item.raw_id);
    }
    if (!raw) return { missingRaw: true };
    const parsed = withoutNul(await this.parser.parse(raw));
    if (parsed.error) logging.log.warn({ raw_id: item.raw_id, reason: parsed.error }, 'message read in part');
    // Attachments are stored once per raw message, under names the copies share.
    await Promise.all(parsed.attachments.map((a, i) => this.attachments.put(`${item.raw_id}.${i}`, a.content)));
    let stored = 0;
    const receivedAt = new Date(item.received_at);
    for (const rcpt of pending) {
      const named = await this.inboxes.findAnyById(rcpt.inbox_id);
      if (!named) {
        // Resolved at RCPT moments ago, so it existed: never hard-deleted, this cannot happen.
        logging.log.error({ inbox_id: rcpt.inbox_id, raw_id: item.raw_id }, 'recipient inbox does not exist; message kept in the raw store only');
        continue;
      }
      // The edge resolves an address from its cache (RCPT_CACHE_TTL_MS): the inbox it named may
      // have been deleted before the mail arrived, and its address given to another inbox,
      // another tenant's perhaps. The mail is that inbox's; with no owner on arrival it stays
      // with the one named (accepted mail is never dropped). A copy already stored there is
      // found by the unique (inbox, raw message) key.
      const inbox = named.deleted_at && named.deleted_at <= receivedAt ? ((await this.inboxes.ownerAt(named.address, receivedAt)) ?? named) : named;
      if (inbox !== named) logging.log.info({ inbox_id: named.id, to_inbox_id: inbox.id, raw_id: item.raw_id }, 'mail for an inbox deleted before it arrived: stored in the inbox its address had then');
      const inserted = await this.storeOne(item, parsed, { id: inbox.id, org_id: inbox.org_id, env_id: inbox.env_id, address: inbox.address });
      if (inserted) stored++;
    }
    this.outbox.kick();
    return { stored, skipped: item.recipients.length - pending.length };
  }

  /** The event's outbox row; one too large for the bus is made to fit (see fitted). */
  private eventRow(event: EnvelopeOf<'message.received'>): OutboxRow {
    try {
      return this.outbox.eventRow(event);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'payload_too_large')) throw err;
      return this.outbox.eventRow(fitted(event, this.outbox.maxPayloadBytes()));
    }
  }

  private async storeOne(item: InboundMail, parsed: ParsedMail, inbox: { id: string; org_id: string; env_id: string; address: string }): Promise<boolean> {
    const receivedAt = new Date(item.received_at);
    const subject = parsed.subject;
    const parent = await this.messages.findThreadOfParent(inbox.id, parentIds(parsed.in_reply_to, parsed.references));
    const joins = parent !== undefined && subjectsAgree(subject, parent.normalized_subject);
    const threadId = joins ? parent.id : newId('thread');
    const messageId = newId('message');
    const toAddresses = parsed.to.length ? parsed.to.map((a) => a.address) : [inbox.address];
    const fromAddress = parsed.from?.address ?? item.mail_from;
    const spam = item.spam.verdict === 'spam';
    const text = preview(parsed.extracted_text ?? parsed.text);
    const now = this.clock.now();
    const event: EnvelopeOf<'message.received'> | null = spam
      ? null
      : {
          id: newId('event'),
          type: 'message.received',
          timestamp: now.toISOString(),
          org_id: inbox.org_id,
          env_id: inbox.env_id,
          data: {
            message_id: messageId,
            thread_id: threadId,
            inbox_id: inbox.id,
            from_address: fromAddress,
            to_addresses: toAddresses,
            subject,
            extracted_text: parsed.extracted_text ?? '',
            has_attachments: parsed.attachments.length > 0,
            received_at: receivedAt.toISOString(),
          },
        };
    const [inserted] = await this.messages.insertMessages([
      {
        message: {
          id: messageId,
          org_id: inbox.org_id,
          env_id: inbox.env_id,
          inbox_id: inbox.id,
          thread_id: threadId,
          direction: 'inbound',
          raw_id: item.raw_id,
          raw_size: item.size,
          message_id_header: parsed.message_id,
          in_reply_to: parsed.in_reply_to,
          references: parsed.references,
          from_address: fromAddress,
          from_name: parsed.from?.name || null,
          reply_to: parsed.reply_to.map((a) => a.address),
          to_addresses: toAddresses,
          cc_addresses: parsed.cc.map((a) => a.address),
          subject,
          text_body: parsed.text,
          html_body: parsed.html,
          extracted_text: parsed.extracted_text,
          extracted_html: parsed.extracted_html,
          has_attachments: parsed.attachments.length > 0,
          auth: JSON.stringify(item.auth),
          spam: JSON.stringify(item.spam),
          mail_from: item.mail_from,
          parse_error: parsed.error,
          received_at: receivedAt,
        },
        thread: joins
          ? { create: false, preview: text }
          : {
              create: true,
              row: { id: threadId, org_id: inbox.org_id, env_id: inbox.env_id, inbox_id: inbox.id, subject, normalized_subject: normalizeSubject(subject), last_message_at: receivedAt, preview: text },
            },
        attachments: parsed.attachments.map((a, i) => ({
          id: newId('attachment'),
          org_id: inbox.org_id,
          filename: a.filename,
          content_type: a.content_type,
          size: a.size,
          content_id: a.content_id,
          disposition: a.disposition,
          checksum: a.checksum,
          position: i,
          object_name: `${item.raw_id}.${i}`,
        })),
        labels: ['received', ...(spam ? ['spam'] : []), ...(isAuthenticated(item.auth) ? [] : ['unauthenticated'])],
        // The outbox validates the envelope against the contract before it is stored.
        outbox: event && this.eventRow(event),
      },
    ]);
    return inserted!;
  }
}
