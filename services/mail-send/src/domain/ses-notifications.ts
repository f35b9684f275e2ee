/**
 * SES notifications, delivered by SNS to the gateway's provider endpoint. The SNS signature
 * must hold and the topic must be one we subscribed (a signature only proves SNS sent it,
 * and anyone can own a topic). A subscription is confirmed by fetching its SubscribeURL
 * (SNS hosts only). A notification (event publishing's `eventType`, or an identity's
 * `notificationType`) becomes the same feedback an SMTP report would: Delivery ->
 * delivered, Bounce -> bounced (Permanent suppresses; Undetermined is treated as Transient),
 * Complaint -> complained, Reject (SES refused the content) -> a Permanent bounce that
 * suppresses nobody. Each notification is applied once (its SNS MessageId).
 *
 * The message is the one our tag names, checked against SES's MessageId when we have it, or
 * the one with that provider id. A notification about a message we cannot find yet, or not
 * recorded as sent yet (its `sent` not committed), is answered 503 for a while so SNS delivers
 * it again; then it is dropped (not found) or applied (found; see feedback-handler.ts).
 */
import { z } from 'zod';
import { AppError, isId } from '@mailroom/contracts';
import type { Clock, Logger } from '@mailroom/platform';
import type { SendRepository, SendRow } from '../repo/send.repository';
import { MESSAGE_TAG } from '../providers/ses';
import type { BounceSubType, ComplaintFeedback, DsnFeedback } from './feedback';
import type { FeedbackHandler } from './feedback-handler';
import type { FetchText } from './ports';
import type { SnsVerifier } from './sns';

const address = z.string().transform((a) => a.toLowerCase());

export const sesEvent = z.object({
  eventType: z.string().optional(),
  notificationType: z.string().optional(),
  mail: z.object({
    messageId: z.string().min(1),
    timestamp: z.string(),
    tags: z.record(z.string(), z.array(z.string())).optional(),
  }),
  bounce: z
    .object({
      bounceType: z.string(),
      bounceSubType: z.string().optional(),
      bouncedRecipients: z.array(z.object({ emailAddress: address, status: z.string().optional(), diagnosticCode: z.string().optional() })),
      timestamp: z.string().optional(),
    })
    .optional(),
  complaint: z
    .object({
      complainedRecipients: z.array(z.object({ emailAddress: address })),
      complaintFeedbackType: z.string().optional(),
      timestamp: z.string().optional(),
    })
    .optional(),
  delivery: z.object({ recipients: z.array(address), timestamp: z.string().optional() }).optional(),
  reject: z.object({ reason: z.string().optional() }).optional(),
});
type SesEvent = z.infer<typeof sesEvent>;

/** How long a notification about a message we do not know is asked again (SNS retries) before it is dropped. */
export const UNKNOWN_MESSAGE_GRACE_MS = 10 * 60_000;

export function subTypeOf(ses: string | undefined): BounceSubType {
  if (ses === 'NoEmail') return 'NoEmail';
  if (ses === 'Suppressed' || ses === 'OnAccountSuppressionList') return 'Suppressed';
  return 'General';
}

function dateOf(iso: string | undefined): Date | undefined {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? undefined : new Date(t);
}

type Translated = { feedback: DsnFeedback | ComplaintFeedback; at: Date | undefined; suppress: boolean } | null;

/** SES event types that say what became of a message (Send, Open, Click, DeliveryDelay... change nothing). */
const FINAL_EVENTS = new Set(['Delivery', 'Bounce', 'Complaint', 'Reject']);

/** What an SES event says, as the feedback an SMTP report would give; `recipients`: the message's, for a Reject. */
export function translate(e: SesEvent, recipients: string[]): Translated {
  const type = e.eventType ?? e.notificationType;
  const dsn = (recipients: DsnFeedback['recipients']): DsnFeedback => ({ kind: 'dsn', recipients, envelopeId: null, originalMessageId: null, reportingMta: null, verpToken: null });
  if (type === 'Delivery' && e.delivery) {
    return {
      feedback: dsn(e.delivery.recipients.map((a) => ({ address: a, action: 'delivered', status: '2.0.0', diagnosticCode: '', bounceType: null, bounceSubType: null }))),
      at: dateOf(e.delivery.timestamp),
      suppress: true,
    };
  }
  if (type === 'Bounce' && e.bounce) {
    const permanent = e.bounce.bounceType === 'Permanent';
    const subType = permanent ? subTypeOf(e.bounce.bounceSubType) : 'General';
    return {
      feedback: dsn(
        e.bounce.bouncedRecipients.map((r) => ({
          address: r.emailAddress,
          action: 'failed',
          status: r.status ?? (permanent ? '5.0.0' : '4.0.0'),
          diagnosticCode: r.diagnosticCode ?? `ses; ${e.bounce!.bounceType}/${e.bounce!.bounceSubType ?? 'General'}`,
          bounceType: permanent ? 'Permanent' : 'Transient',
          bounceSubType: subType,
        })),
      ),
      at: dateOf(e.bounce.timestamp),
      suppress: true,
    };
  }
  if (type === 'Complaint' && e.complaint) {
    const feedback: ComplaintFeedback = {
      kind: 'complaint',
      feedbackType: (e.complaint.complaintFeedbackType ?? 'abuse').toLowerCase(),
      recipients: e.complaint.complainedRecipients.map((r) => r.emailAddress),
      originalMessageId: null,
      envelopeId: null,
      originalMailFrom: null,
      verpToken: null,
    };
    return { feedback, at: dateOf(e.complaint.timestamp), suppress: true };
  }
  if (type === 'Reject') {
    const diagnosticCode = `ses; Reject: ${e.reject?.reason ?? 'rejected'}`;
    return {
      feedback: dsn(recipients.map((a) => ({ address: a, action: 'failed', status: '5.7.1', diagnosticCode, bounceType: 'Permanent', bounceSubType: 'General' }))),
      at: undefined,
      suppress: false,
    };
  }
  return null;
}

export class SesNotifications {
  constructor(
    private readonly verifier: SnsVerifier,
    private readonly topics: ReadonlySet<string>,
    private readonly repo: SendRepository,
    private readonly feedback: FeedbackHandler,
    private readonly clock: Clock,
    private readonly fetch: FetchText,
  ) {}

  async receive(body: string, log: Logger): Promise<void> {
    const m = await this.verifier.verify(body);
    if (!this.topics.has(m.TopicArn)) throw new AppError('forbidden', `topic ${m.TopicArn} is not one of SES_SNS_TOPIC_ARNS`);
    if (m.Type === 'SubscriptionConfirmation') return this.confirm(m.SubscribeURL, m.TopicArn, log);
    if (m.Type === 'UnsubscribeConfirmation') {
      log.warn({ topic: m.TopicArn }, 'SNS says the endpoint was unsubscribed from a topic: SES notifications stop until it is subscribed again');
      return;
    }
    let event: SesEvent;
    try {
      event = sesEvent.parse(JSON.parse(m.Message));
    } catch {
      log.warn({ sns_message_id: m.MessageId, topic: m.TopicArn }, 'SNS notification that is no SES event: ignored');
      return;
    }
    if (!FINAL_EVENTS.has(event.eventType ?? event.notificationType ?? '')) return;
    if (await this.aboutSystemMail(`sns:${m.MessageId}`, event, log)) return;
    const send = await this.messageOf(event);
    if (!send) {
      const age = this.clock.now().getTime() - (dateOf(event.mail.timestamp)?.getTime() ?? 0);
      if (age < UNKNOWN_MESSAGE_GRACE_MS) throw new AppError('service_unavailable', 'the message this notification is about is not known yet; deliver it again');
      log.warn({ sns_message_id: m.MessageId, ses_message_id: event.mail.messageId }, 'SES notification about no message of ours: ignored');
      return;
    }
    const what = translate(event, send.to_addresses);
    if (!what) {
      log.warn({ sns_message_id: m.MessageId, type: event.eventType ?? event.notificationType }, 'SES event without its details: ignored');
      return;
    }
    // SES took the message at mail.timestamp: the notification waits for our sent record from then on.
    const tookAt = dateOf(event.mail.timestamp);
    const applied = await this.feedback.apply(`sns:${m.MessageId}`, send, what.feedback, log, {
      ...(what.at ? { at: what.at } : {}),
      suppress: what.suppress,
      ...(tookAt ? { reportedAt: tookAt, handedOverAt: tookAt } : {}),
    });
    if (applied === 'not-sent-yet') throw new AppError('service_unavailable', 'the message this notification is about is not recorded as sent yet; deliver it again');
  }

  /** A notification about mail from the platform itself, applied there (system-mail/system-feedback.ts); false when it is not about one. */
  private async aboutSystemMail(reportId: string, e: SesEvent, log: Logger): Promise<boolean> {
    const tagged = e.mail.tags?.[MESSAGE_TAG]?.[0];
    if (!tagged || !isId('systemMail', tagged)) return false;
    const mail = await this.feedback.systemMail.find(tagged);
    if (!mail) return false;
    const what = translate(e, [mail.to_address]);
    if (what) await this.feedback.systemMail.apply(reportId, mail, what.feedback, log, what.suppress);
    return true;
  }

  private async messageOf(e: SesEvent): Promise<SendRow | undefined> {
    const tagged = e.mail.tags?.[MESSAGE_TAG]?.[0];
    if (tagged && isId('message', tagged)) {
      const send = await this.repo.find(tagged);
      if (send && send.provider === 'ses' && (send.provider_message_id === null || send.provider_message_id === e.mail.messageId)) return send;
    }
    return this.repo.findByProviderId('ses', e.mail.messageId);
  }

  private async confirm(url: string | undefined, topic: string, log: Logger): Promise<void> {
    if (!url || !this.verifier.trusts(url)) throw new AppError('forbidden', 'SubscribeURL is not an SNS URL');
    try {
      await this.fetch(url, 64 * 1024);
    } catch (err) {
      throw new AppError('service_unavailable', `the subscription could not be confirmed: ${(err as Error).message}`);
    }
    log.info({ topic }, 'SNS subscription confirmed');
  }
}
