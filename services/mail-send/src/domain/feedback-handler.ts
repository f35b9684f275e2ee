/**
 * Turning a report that came back to a VERP address into what it says about our message:
 * delivered (message.delivered with processing_time_ms), bounced (message.bounced; hard
 * bounces suppress the address), complained (message.complained; the address is
 * suppressed). The message is the one the VERP address names, and only if its mac checks
 * out: a report we cannot attribute changes nothing. Each report is processed once (its raw
 * id), in one transaction with the events it causes. The status only moves forward: a late
 * `delivered` after a bounce changes nothing and announces nothing.
 */
import { newId, type EnvelopeOf, type FeedbackMail } from '@mailroom/contracts';
import { withTransaction, type Kysely, type Transaction } from '@mailroom/db';
import type { Clock, Logger } from '@mailroom/platform';
import type { Outbox } from '@mailroom/runtime';
import type { SendRepository, SendRow } from '../repo/send.repository';
import type { SendDb } from '../repo/tables';
import type { ComplaintFeedback, DsnFeedback, Feedback } from './feedback';
import { before } from './status';
import type { Verp } from './verp';

export type FeedbackOutcome = 'applied' | 'duplicate' | 'unattributed' | 'not-a-report';

export interface ApplyOptions {
  at?: Date;
  suppress?: boolean;
}

export class FeedbackHandler {
  constructor(
    private readonly db: Kysely<SendDb>,
    private readonly repo: SendRepository,
    private readonly verp: Verp,
    private readonly parse: (raw: Buffer) => Promise<Feedback>,
    private readonly outbox: Outbox<SendDb>,
    private readonly clock: Clock,
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
    const send = messageId ? await this.repo.find(messageId) : undefined;
    if (!send) {
      log.warn({ raw_id: item.raw_id, rcpt_to: item.rcpt_to }, 'report about no message of ours (or a forged VERP address): ignored');
      return 'unattributed';
    }
    return this.apply(item.raw_id, send, feedback, log);
  }

  /**
   * Applies what a report says about one of our messages, once per report id (a raw message
   * id, or a provider's notification id). `at`: when the provider says it happened (default
   * now); `suppress` false: a failure that says nothing about the addresses.
   */
  async apply(reportId: string, send: SendRow, feedback: DsnFeedback | ComplaintFeedback, log: Logger, opts: ApplyOptions = {}): Promise<'applied' | 'duplicate'> {
    const applied = await withTransaction(this.db, async (trx) => {
      if (!(await this.repo.claimFeedback(reportId, send.message_id, trx))) return false;
      const now = opts.at ?? this.clock.now();
      if (feedback.kind === 'dsn') await this.applyDsn(trx, send, feedback, now, opts.suppress ?? true, log);
      else await this.applyComplaint(trx, send, feedback, now);
      return true;
    });
    if (applied) this.outbox.kick();
    return applied ? 'applied' : 'duplicate';
  }

  private envelope<T extends 'message.delivered' | 'message.bounced' | 'message.complained'>(type: T, send: SendRow, now: Date) {
    return { id: newId('event'), type, timestamp: now.toISOString(), org_id: send.org_id, env_id: send.env_id };
  }

  private async applyDsn(trx: Transaction<SendDb>, send: SendRow, dsn: DsnFeedback, now: Date, suppress: boolean, log: Logger): Promise<void> {
    const delivered = dsn.recipients.filter((r) => r.action === 'delivered' || r.action === 'relayed');
    const failed = dsn.recipients.filter((r) => r.action === 'failed');
    if (delivered.length && (await this.repo.advance(send.message_id, before('delivered'), { status: 'delivered', delivered_at: now }, trx))) {
      const event: EnvelopeOf<'message.delivered'> = {
        ...this.envelope('message.delivered', send, now),
        type: 'message.delivered',
        data: {
          message_id: send.message_id,
          thread_id: send.thread_id,
          inbox_id: send.inbox_id,
          to_addresses: delivered.map((r) => r.address),
          delivered_at: now.toISOString(),
          processing_time_ms: send.sent_at ? Math.max(0, now.getTime() - send.sent_at.getTime()) : 0,
        },
      };
      await this.outbox.add(trx, event);
    }
    for (const type of ['Permanent', 'Transient'] as const) {
      const group = failed.filter((r) => (r.bounceType ?? 'Permanent') === type);
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
          bounced_recipients: group.map((r) => ({ email_address: r.address, status: r.status, diagnostic_code: r.diagnosticCode })),
          bounced_at: now.toISOString(),
        },
      };
      await this.outbox.add(trx, event);
      if (type === 'Permanent' && suppress) {
        for (const r of group) await this.repo.suppress({ org_id: send.org_id, env_id: send.env_id, address: r.address, reason: 'hard_bounce', message_id: send.message_id }, trx);
      }
    }
    if (!delivered.length && !failed.length) log.info({ message_id: send.message_id, actions: dsn.recipients.map((r) => r.action) }, 'delivery delayed');
  }

  private async applyComplaint(trx: Transaction<SendDb>, send: SendRow, complaint: ComplaintFeedback, now: Date): Promise<void> {
    const recipients = complaint.recipients.length ? complaint.recipients : send.to_addresses;
    await this.repo.advance(send.message_id, before('complained'), { status: 'complained', complained_at: now }, trx);
    const event: EnvelopeOf<'message.complained'> = {
      ...this.envelope('message.complained', send, now),
      type: 'message.complained',
      data: {
        message_id: send.message_id,
        inbox_id: send.inbox_id,
        complained_recipients: recipients,
        feedback_type: complaint.feedbackType || 'abuse',
        complained_at: now.toISOString(),
      },
    };
    await this.outbox.add(trx, event);
    for (const address of recipients) await this.repo.suppress({ org_id: send.org_id, env_id: send.env_id, address, reason: 'complaint', message_id: send.message_id }, trx);
  }
}
