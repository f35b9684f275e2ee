/**
 * The SMTP edge's metrics: sessions (connections taken or refused), each message's verdict
 * at the end of DATA (accepted, with its spam verdict; refused, with the reply's name as the
 * reason), and every refusal by the stage it came at (connect, MAIL, RCPT, DATA). Reasons
 * are the names of the reply table (domain/replies.ts): a bounded set, no address, no text.
 */
import { SERVICE_ATTRIBUTE, meterOf } from '@mailroom/platform';
import type { ReplyName } from '../domain/replies';

export type SmtpStage = 'connect' | 'mail' | 'rcpt' | 'data';

const SERVICE = { [SERVICE_ATTRIBUTE]: 'mail-ingest' } as const;

export class SmtpMetrics {
  private readonly meter = meterOf();
  private readonly sessions = this.meter.createCounter('mailroom.smtp.sessions', { description: 'SMTP connections, taken or refused (too many from one address)', unit: '{session}' });
  private readonly messages = this.meter.createCounter('mailroom.smtp.messages', { description: 'Messages at the end of DATA by verdict: accepted (with the spam verdict) or refused (with the reason)', unit: '{message}' });
  private readonly refusals = this.meter.createCounter('mailroom.smtp.refusals', { description: 'SMTP commands refused, by stage and reason', unit: '{reply}' });

  session(taken: boolean): void {
    this.sessions.add(1, { ...SERVICE, 'mailroom.smtp.session.outcome': taken ? 'taken' : 'refused' });
    if (!taken) this.refused('connect', 'tooManyConnections');
  }

  accepted(spam: 'ham' | 'spam' | 'unscanned'): void {
    this.messages.add(1, { ...SERVICE, 'mailroom.smtp.verdict': 'accepted', 'mailroom.spam.verdict': spam });
  }

  /** A refusal; at `data`, the message's verdict too. */
  refused(stage: SmtpStage, reason: ReplyName): void {
    this.refusals.add(1, { ...SERVICE, 'mailroom.smtp.stage': stage, 'mailroom.smtp.reason': reason });
    if (stage === 'data') this.messages.add(1, { ...SERVICE, 'mailroom.smtp.verdict': 'refused', 'mailroom.smtp.reason': reason });
  }
}
