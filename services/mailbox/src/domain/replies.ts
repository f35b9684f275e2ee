/**
 * Replies: the message is stored at once in the thread of the one it answers (label
 * `sent`), and its send job is written in the same transaction (outbox -> mail.outbound),
 * so a stored reply is always sent and a refused one is never stored. mail-send checks the
 * send first (suppression list, rate, paused inbox) and announces a refusal itself.
 */
import { AppError, newId, type OutboundJob } from '@mailroom/contracts';
import { withTransaction, type Kysely } from '@mailroom/db';
import type { Clock } from '@mailroom/platform';
import type { Outbox } from '@mailroom/runtime';
import type { InboxRepository, Tenant } from '../repo/inbox.repository';
import type { MessageRepository, MessageRow } from '../repo/message.repository';
import type { MailboxDb } from '../repo/tables';
import { preview } from './messages';

export interface SendCheck {
  check(req: {
    org_id: string;
    env_id: string;
    inbox_id: string;
    inbox_status: 'active' | 'paused';
    from_address: string;
    to_addresses: string[];
    subject: string;
  }): Promise<void>;
}

/** "Re: " once: a subject that already starts with a reply prefix is kept as it is. */
export function replySubject(subject: string): string {
  return /^\s*re\s*(\[\d+\])?\s*:/i.test(subject) ? subject.trim() : `Re: ${subject.trim()}`.trim();
}

/** Who a reply goes to: the Reply-To of the original, else its sender; our own sent message answers its recipients. */
export function replyRecipients(original: Pick<MessageRow, 'direction' | 'reply_to' | 'from_address' | 'to_addresses'>): string[] {
  if (original.direction === 'outbound') return original.to_addresses;
  return original.reply_to.length ? original.reply_to : original.from_address ? [original.from_address] : [];
}

const MAX_REFERENCES = 30;

export class Replies {
  constructor(
    private readonly db: Kysely<MailboxDb>,
    private readonly inboxes: InboxRepository,
    private readonly messages: MessageRepository,
    private readonly outbox: Outbox<MailboxDb>,
    private readonly checks: SendCheck,
    private readonly clock: Clock,
  ) {}

  async reply(t: Tenant, inboxId: string, messageId: string, body: { text_body: string; html_body?: string | undefined }): Promise<{ message_id: string; thread_id: string }> {
    const inbox = await this.inboxes.find(t, inboxId);
    if (!inbox) throw AppError.notFound('inbox');
    const original = await this.messages.findMessage(t, messageId, inboxId);
    if (!original) throw AppError.notFound('message');
    const to = replyRecipients(original);
    if (!to.length) throw new AppError('unprocessable', 'the message has no address to reply to (no From or Reply-To)');
    const subject = replySubject(original.subject);
    await this.checks.check({ org_id: t.org_id, env_id: t.env_id, inbox_id: inbox.id, inbox_status: inbox.status, from_address: inbox.address, to_addresses: to, subject });

    const now = this.clock.now();
    const id = newId('message');
    const references = [...original.references, ...(original.message_id_header ? [original.message_id_header] : [])].slice(-MAX_REFERENCES);
    const job: OutboundJob = {
      message_id: id,
      thread_id: original.thread_id,
      inbox_id: inbox.id,
      org_id: t.org_id,
      env_id: t.env_id,
      raw_id: newId('raw'),
      message_id_header: `${id}@${inbox.domain}`,
      from: { address: inbox.address, name: inbox.display_name },
      to,
      cc: [],
      bcc: [],
      subject,
      text_body: body.text_body,
      html_body: body.html_body ?? null,
      in_reply_to: original.message_id_header,
      references,
      created_at: now.toISOString(),
    };
    await withTransaction(this.db, async (trx) => {
      await this.messages.insertOutbound(
        {
          id,
          org_id: t.org_id,
          env_id: t.env_id,
          inbox_id: inbox.id,
          thread_id: original.thread_id,
          direction: 'outbound',
          raw_id: job.raw_id,
          raw_size: 0,
          message_id_header: job.message_id_header,
          in_reply_to: job.in_reply_to,
          references,
          from_address: inbox.address,
          from_name: inbox.display_name,
          reply_to: [],
          to_addresses: to,
          cc_addresses: [],
          subject,
          text_body: body.text_body,
          html_body: body.html_body ?? '',
          extracted_text: body.text_body,
          has_attachments: false,
          auth: JSON.stringify({ spf: { result: 'none' }, dkim: { result: 'none' }, dmarc: { result: 'none' }, arc: { result: 'none' } }),
          spam: JSON.stringify({ score: null, verdict: 'unscanned' }),
          mail_from: '',
          parse_error: null,
          received_at: now,
          created_at: now,
        },
        preview(body.text_body),
        trx,
      );
      await this.outbox.addWork(trx, 'mail.outbound', id, job);
    });
    this.outbox.kick();
    return { message_id: id, thread_id: original.thread_id };
  }
}
