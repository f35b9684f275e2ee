/**
 * Turning a report that came back to a VERP address (or an SES notification) into what it
 * says about our message (mail from the platform itself: system-mail/system-feedback.ts). The message is the one the VERP address names, and only if its mac
 * checks out: a report we cannot attribute changes nothing. Each report is processed once
 * (its raw id), in one transaction with the events it causes (outbox: an event's id is fixed
 * when it is written, so a relay that repeats itself publishes the same id).
 *
 * Outcomes are per recipient, events per report:
 * - delivered: message.delivered for the recipients this report confirms that no report
 *   confirmed before (delivered_recipients), with processing_time_ms from our sent record; a
 *   repeat names nobody new and announces nothing. A bounce of another recipient does not
 *   stop it.
 * - bounced: message.bounced per report; hard bounces suppress the address.
 * - feedback reports (attribution.ts): a complaint is message.complained naming, and
 *   suppressing, only recipients the report names (or the only recipient of a send to one);
 *   an unsubscribe (opt-out) suppresses without message.complained; not-spam and other
 *   types change nothing.
 * The send's status is a summary that only moves forward (status.ts): delivered once a
 * recipient is, bounced or complained once one is, and it stays there; the events tell each
 * recipient's story.
 *
 * A report can overtake our record of the hand-over (a relay reports right after its 250,
 * before our commit): a report about a message not recorded as sent waits for it (the
 * consumer asks again shortly), so message.sent comes first and processing time is measured
 * from sent_at. After SENT_WAIT_MS, 30 s (a crash between the 250 and the record, retried by the
 * work queue) it is applied anyway, timed from the provider's own hand-over time when the
 * report gives one (SES), else from the first hand-over attempt (created_at).
 */
import { isId, type EnvelopeOf, type FeedbackMail } from '@mailroom/contracts';
import type { Clock, Logger } from '@mailroom/platform';
import type { SendRepository, SendRow } from '../repo/send.repository';
import type { SendTx } from '../repo/tables';
import { linkToSent } from '../providers/traced';
import { newEventId } from './event-ids';
import type { EventSink, Transact } from './ports';
import { attributeRecipients, feedbackMeaning } from './attribution';
import type { ComplaintFeedback, DsnFeedback, Feedback } from './feedback';
import { before, isHandedOver } from './status';
import type { SystemMailFeedback } from './system-mail/system-feedback';
import type { Verp } from './verp';

export type FeedbackOutcome = 'applied' | 'duplicate' | 'not-sent-yet' | 'unattributed' | 'not-a-report';

/**
 * How long a report about a message not recorded as sent waits for that record before it is
 * applied anyway. Short enough for SNS's default retries of a notification (3, 20 s apart:
 * a longer wait would see SNS give up and the notification lost), and well before the
 * outbound work item of a sender that crashed comes back (120 s): by then the report has
 * moved the status past `sending`, so the message is not handed over a second time.
 */
export const SENT_WAIT_MS = 30_000;

export interface ApplyOptions {
  /** When the provider says it happened (default now). */
  at?: Date;
  /** false: a failure that says nothing about the addresses. */
  suppress?: boolean;
  /** When the report reached us (or the provider took the message): it waits for our sent record until SENT_WAIT_MS after this. Without it, nothing waits. */
  reportedAt?: Date;
  /** When a delivery was confirmed, if not `at` (a relay's report: its arrival): delivered_at and processing time only. */
  deliveredAt?: Date;
  /** When the provider took the message, by its own account: processing time starts here when our sent record is missing. */
  handedOverAt?: Date;
}

export class FeedbackHandler {
  constructor(
    private readonly transact: Transact,
    private readonly repo: SendRepository,
    private readonly verp: Verp,
    private readonly parse: (raw: Buffer) => Promise<Feedback>,
    private readonly outbox: EventSink,
    private readonly clock: Clock,
    /** Reports about mail from the platform itself (`sml_` ids). */
    readonly systemMail: SystemMailFeedback,
  ) {}

  /** The message a report is about: the VERP address it came to, else the one it quotes; mac checked either way. */
  private messageOf(item: FeedbackMail, feedback: Feedback): string | null {
    for (const rcpt of item.rcpt_to) {
      const id = this.verp.messageOf(rcpt);
      if (id) return id;
    }
    if (feedback.kind !== 'other' && feedback.verpToken) return this.verp.messageOf(`bounces+${feedback.verpToken}@${this.verp.domain}`);
    return null;
  }

  async handle(item: FeedbackMail, raw: Buffer, log: Logger): Promise<FeedbackOutcome> {
    const feedback = await this.parse(raw);
    if (feedback.kind === 'other') {
      log.info({ raw_id: item.raw_id }, 'mail to the bounce domain that is no report: ignored');
      return 'not-a-report';
    }
    const messageId = this.messageOf(item, feedback);
    if (messageId && isId('systemMail', messageId)) {
      const mail = await this.systemMail.find(messageId);
      if (mail) return this.systemMail.apply(item.raw_id, mail, feedback, log);
    }
    const send = messageId ? await this.repo.find(messageId) : undefined;
    if (!send) {
      log.warn({ raw_id: item.raw_id, rcpt_to: item.rcpt_to }, 'report about no message of ours (or a forged VERP address): ignored');
      return 'unattributed';
    }
    // A delivery is timed from the report's arrival, not from when it is applied: the same however often it waited.
    const arrived = new Date(item.received_at);
    return this.apply(item.raw_id, send, feedback, log, { reportedAt: arrived, deliveredAt: arrived });
  }

  /**
   * Applies what a report says about one of our messages, once per report id (a raw message
   * id, or a provider's notification id). 'not-sent-yet': nothing was done; ask again shortly.
   */
  async apply(reportId: string, send: SendRow, feedback: DsnFeedback | ComplaintFeedback, log: Logger, opts: ApplyOptions = {}): Promise<'applied' | 'duplicate' | 'not-sent-yet'> {
    // The report's processing is in the trace of the mail (or notification) that carried it: linked to the send's hand-over.
    linkToSent(send.traceparent);
    if (this.waitsForSent(send, opts.reportedAt)) {
      log.debug({ message_id: send.message_id, report: reportId }, 'report about a message not recorded as sent yet: waits for it');
      return 'not-sent-yet';
    }
    const applied = await this.transact(async (trx) => {
      if (!(await this.repo.claimFeedback(reportId, send.message_id, trx))) return false;
      const now = opts.at ?? this.clock.now();
      if (feedback.kind === 'dsn') await this.applyDsn(trx, send, feedback, now, opts, log);
      else await this.applyComplaint(trx, send, feedback, now, log);
      return true;
    });
    if (applied) this.outbox.kick();
    return applied ? 'applied' : 'duplicate';
  }

  /** A report that overtook our record of the hand-over, while it may still come. */
  private waitsForSent(send: SendRow, reportedAt: Date | undefined): boolean {
    if (!reportedAt || send.sent_at !== null || isHandedOver(send.status)) return false;
    return this.clock.now().getTime() - reportedAt.getTime() < SENT_WAIT_MS;
  }

  private envelope<T extends 'message.delivered' | 'message.bounced' | 'message.complained'>(type: T, send: SendRow, now: Date) {
    return { id: newEventId(), type, timestamp: now.toISOString(), org_id: send.org_id, env_id: send.env_id };
  }

  private async applyDsn(trx: SendTx, send: SendRow, dsn: DsnFeedback, now: Date, opts: ApplyOptions, log: Logger): Promise<void> {
    const named = dsn.recipients.filter((r) => r.action === 'delivered' || r.action === 'relayed').map((r) => r.address);
    const failed = dsn.recipients.filter((r) => r.action === 'failed');
    const confirmed = named.length ? attributeRecipients(named, send.to_addresses) : [];
    if (confirmed.length) {
      const handedOver = send.sent_at ?? opts.handedOverAt ?? send.created_at;
      // A report that arrived before we recorded the hand-over (it waited for that record) was
      // about a delivery made as good as at once: not before the hand-over.
      const confirmedAt = opts.deliveredAt ?? now;
      const at = confirmedAt < handedOver ? handedOver : confirmedAt;
      await this.repo.advance(send.message_id, before('delivered'), { status: 'delivered', delivered_at: at }, trx);
      const fresh = await this.repo.recordDelivered(send.message_id, confirmed, at, trx);
      if (fresh.length) {
        const event: EnvelopeOf<'message.delivered'> = {
          ...this.envelope('message.delivered', send, now),
          type: 'message.delivered',
          data: {
            message_id: send.message_id,
            thread_id: send.thread_id,
            inbox_id: send.inbox_id,
            to_addresses: fresh,
            delivered_at: at.toISOString(),
            processing_time_ms: at.getTime() - handedOver.getTime(),
          },
        };
        await this.outbox.add(trx, event);
      } else log.info({ message_id: send.message_id, recipients: confirmed }, 'delivery already announced for these recipients');
    } else if (named.length) log.warn({ message_id: send.message_id, named }, 'delivery report names none of the recipients: ignored');
    // Each failed recipient as we sent to it (case, and a name we did not send to on a message
    // to one recipient); one we cannot attribute is reported as the report names it, and not suppressed.
    const ours = (address: string): string | undefined => attributeRecipients([address], send.to_addresses)[0];
    for (const type of ['Permanent', 'Transient'] as const) {
      const group = failed.filter((r) => (r.bounceType ?? 'Permanent') === type).map((r) => ({ ...r, ours: ours(r.address) }));
      if (!group.length) continue;
      await this.repo.advance(send.message_id, before('bounced'), { status: 'bounced', bounced_at: now }, trx);
      const event: EnvelopeOf<'message.bounced'> = {
        ...this.envelope('message.bounced', send, now),
        type: 'message.bounced',
        data: {
          message_id: send.message_id,
          thread_id: send.thread_id,
          inbox_id: send.inbox_id,
          bounce_type: type,
          bounce_sub_type: group[0]!.bounceSubType ?? 'General',
          bounced_recipients: group.map((r) => ({ email_address: r.ours ?? r.address, status: r.status, diagnostic_code: r.diagnosticCode })),
          bounced_at: now.toISOString(),
        },
      };
      await this.outbox.add(trx, event);
      if (type === 'Permanent' && (opts.suppress ?? true)) {
        for (const r of group) {
          if (r.ours) await this.repo.suppress({ org_id: send.org_id, env_id: send.env_id, address: r.ours, reason: 'hard_bounce', message_id: send.message_id }, trx);
          else log.warn({ message_id: send.message_id, address: r.address }, 'hard bounce names an address this message was not sent to: not suppressed');
        }
      }
    }
    if (!named.length && !failed.length) log.info({ message_id: send.message_id, actions: dsn.recipients.map((r) => r.action) }, 'delivery delayed');
  }

  private async applyComplaint(trx: SendTx, send: SendRow, report: ComplaintFeedback, now: Date, log: Logger): Promise<void> {
    const meaning = feedbackMeaning(report.feedbackType);
    if (meaning === 'none') {
      log.info({ message_id: send.message_id, feedback_type: report.feedbackType }, 'feedback report that is no complaint: nothing to do');
      return;
    }
    const recipients = attributeRecipients(report.recipients, send.to_addresses);
    if (meaning === 'unsubscribe') {
      // Suppression reasons are hard_bounce, complaint and manual (libs/contracts): an
      // unsubscribe is a person's request, so manual, with the message it came from.
      for (const address of recipients) await this.repo.suppress({ org_id: send.org_id, env_id: send.env_id, address, reason: 'manual', message_id: send.message_id }, trx);
      log.info({ message_id: send.message_id, suppressed: recipients.length }, 'unsubscribe request: suppressed, no complaint announced');
      return;
    }
    if (!recipients.length) log.warn({ message_id: send.message_id, named: report.recipients }, 'complaint names no recipient of a message to several: announced without names, nobody suppressed');
    await this.repo.advance(send.message_id, before('complained'), { status: 'complained', complained_at: now }, trx);
    const event: EnvelopeOf<'message.complained'> = {
      ...this.envelope('message.complained', send, now),
      type: 'message.complained',
      data: {
        message_id: send.message_id,
        inbox_id: send.inbox_id,
        complained_recipients: recipients,
        feedback_type: report.feedbackType || 'abuse',
        complained_at: now.toISOString(),
      },
    };
    await this.outbox.add(trx, event);
    for (const address of recipients) await this.repo.suppress({ org_id: send.org_id, env_id: send.env_id, address, reason: 'complaint', message_id: send.message_id }, trx);
  }
}
