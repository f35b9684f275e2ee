/**
 * What comes back about mail from the platform itself (a verification code, a reset link):
 * its envelope sender is a VERP address naming the mail (`bounces+sml_...`), so reports find
 * it as they find a customer's message. A hard bounce or a complaint about it marks the mail
 * and puts the address on the platform's own suppression list (system_suppressions), which
 * every later system mail to that address checks first (system-mailer.ts): mailing an address
 * that does not exist, or a person who called our mail spam, again and again is what costs
 * the sending domain its reputation, and it is the customers' sending domain too. An
 * unsubscribe suppresses as well. Soft bounces, delays, deliveries and not-spam change
 * nothing. Customers' suppression lists are not touched: this mail was not theirs. Each
 * report is applied once (its raw id or SNS id, as for customer mail).
 */
import type { Logger } from '@mailroom/platform';
import type { SystemMailStatus, SystemSuppressionReason } from '../../repo/tables';
import type { SendTx } from '../../repo/tables';
import { attributeRecipients, feedbackMeaning } from '../attribution';
import type { ComplaintFeedback, DsnFeedback } from '../feedback';
import type { Transact } from '../ports';

export interface SystemMailRecord {
  id: string;
  to_address: string;
  status: SystemMailStatus;
}

export interface Verdict {
  /** What the mail becomes; null: it stays as it is. */
  status: 'bounced' | 'complained' | null;
  /** Why the address is no longer mailed; null: it still is. */
  suppress: SystemSuppressionReason | null;
}

/**
 * What a report means for a system mail to `to` (it has one recipient). `suppressible`
 * false: the failure says nothing about the address (SES refused the content).
 */
export function systemMailVerdict(feedback: DsnFeedback | ComplaintFeedback, to: string, suppressible = true): Verdict {
  const nothing: Verdict = { status: null, suppress: null };
  if (feedback.kind === 'dsn') {
    const hard = feedback.recipients.some(
      (r) => r.action === 'failed' && (r.bounceType ?? 'Permanent') === 'Permanent' && attributeRecipients([r.address], [to]).length > 0,
    );
    return hard ? { status: 'bounced', suppress: suppressible ? 'hard_bounce' : null } : nothing;
  }
  const meaning = feedbackMeaning(feedback.feedbackType);
  // A system mail has one recipient: a report about it is about that recipient, whoever it names (attribution.ts).
  if (meaning === 'none' || attributeRecipients(feedback.recipients, [to]).length === 0) return nothing;
  return meaning === 'complaint' ? { status: 'complained', suppress: 'complaint' } : { status: null, suppress: 'unsubscribe' };
}

/** The queries this needs (repo/system-mail.repository.ts). */
export interface SystemFeedbackStore {
  find(id: string): Promise<SystemMailRecord | undefined>;
  /** false when the report was applied before. */
  claimReport(reportId: string, mailId: string, tx: SendTx): Promise<boolean>;
  /** Moves a handed-over mail (sending when the report overtook our record, sent, or bounced on its way to complained) to `status`. */
  mark(id: string, status: 'bounced' | 'complained', tx: SendTx): Promise<void>;
  suppress(row: { address: string; reason: SystemSuppressionReason; system_mail_id: string; now: Date }, tx: SendTx): Promise<void>;
}

export class SystemMailFeedback {
  constructor(
    private readonly transact: Transact,
    private readonly store: SystemFeedbackStore,
    private readonly now: () => Date,
  ) {}

  find(id: string): Promise<SystemMailRecord | undefined> {
    return this.store.find(id);
  }

  async apply(reportId: string, mail: SystemMailRecord, feedback: DsnFeedback | ComplaintFeedback, log: Logger, suppressible = true): Promise<'applied' | 'duplicate'> {
    const verdict = systemMailVerdict(feedback, mail.to_address, suppressible);
    const applied = await this.transact(async (tx) => {
      if (!(await this.store.claimReport(reportId, mail.id, tx))) return false;
      if (verdict.status) await this.store.mark(mail.id, verdict.status, tx);
      if (verdict.suppress) await this.store.suppress({ address: mail.to_address.toLowerCase(), reason: verdict.suppress, system_mail_id: mail.id, now: this.now() }, tx);
      return true;
    });
    if (applied && verdict.suppress) log.info({ system_mail_id: mail.id, reason: verdict.suppress }, 'system mail: the address is no longer mailed by the platform');
    return applied ? 'applied' : 'duplicate';
  }
}
