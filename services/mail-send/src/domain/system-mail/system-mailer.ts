/**
 * Mail from the platform itself (work queues mail.system and mail.account): rendered from its template, sent
 * from the system address of the configuration (never one the caller names), DKIM-signed
 * with MAIL_DOMAIN's key, handed to the configured provider with a VERP envelope sender naming
 * the mail, so its bounces and complaints come back to it (system-feedback.ts); an address on
 * the platform's suppression list is not mailed again. Each mail id is sent once: a
 * redelivered item finds its row `sent`; temporary failures are retried from the queue, up
 * to MAX_ATTEMPTS hand-overs, then the mail is given up as failed. The data (an invitation's
 * token, a verification code) is never stored or logged here: the row keeps the template and the recipient.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import type { PlatformMail } from '@mailroom/contracts';
import type { Clock, Logger } from '@mailroom/platform';
import { ProviderError, type MailProvider, type RejectedRecipient } from '../../providers/provider';
import type { SystemMailStatus } from '../../repo/tables';
import { signDkim, type DkimKey } from '../dkim';
import { MAX_ATTEMPTS } from '../outbound';
import type { Verp } from '../verp';
import { renderSystemMail } from './templates';

/** Who system mail is from: SYSTEM_MAIL_FROM (default no-reply@MAIL_DOMAIN) and its display name. */
export interface SystemSender {
  address: string;
  name: string;
}

/** The record of each system mail id, and the addresses it no longer goes to (repo/system-mail.repository.ts). */
export interface SystemMailLog {
  /** Records an attempt (the first makes the row); the row as it is after. */
  claim(row: { id: string; template: string; to_address: string; now: Date }): Promise<{ status: SystemMailStatus; attempts: number }>;
  finish(id: string, status: 'sent' | 'failed' | 'suppressed', at: Date, error: string | null): Promise<void>;
  isSuppressed(address: string): Promise<boolean>;
  suppress(row: { address: string; reason: 'hard_bounce'; system_mail_id: string; now: Date }): Promise<void>;
}

export type SystemMailOutcome = 'sent' | 'already-done' | 'failed' | 'suppressed' | 'retry';

export class SystemMailer {
  constructor(
    private readonly log: SystemMailLog,
    private readonly provider: MailProvider,
    private readonly dkim: DkimKey | undefined,
    private readonly sender: SystemSender,
    private readonly verp: Pick<Verp, 'address'>,
    private readonly domain: string,
    private readonly clock: Clock,
  ) {}

  /** The message as it leaves: composed from the template, signed. */
  async compose(mail: PlatformMail): Promise<Buffer> {
    const { subject, text, html } = renderSystemMail(mail);
    const now = this.clock.now();
    const composer = new MailComposer({
      from: { name: this.sender.name, address: this.sender.address },
      to: mail.to,
      subject,
      text,
      html,
      messageId: `<${mail.id}@${this.domain}>`,
      date: now,
      headers: { 'Auto-Submitted': 'auto-generated', 'X-Mailroom-Template': mail.template },
    });
    const raw = await composer.compile().build();
    return this.dkim ? signDkim(raw, this.dkim, now) : raw;
  }

  async send(mail: PlatformMail, logging: { readonly log: Logger }): Promise<SystemMailOutcome> {
    const row = await this.log.claim({ id: mail.id, template: mail.template, to_address: mail.to, now: this.clock.now() });
    if (row.status !== 'sending') return 'already-done';
    if (await this.log.isSuppressed(mail.to)) {
      logging.log.info({ system_mail_id: mail.id, template: mail.template }, 'system mail: the address bounced or complained before; not sent');
      await this.log.finish(mail.id, 'suppressed', this.clock.now(), null);
      return 'suppressed';
    }
    const raw = await this.compose(mail);
    try {
      const accepted = await this.provider.send({ from: this.verp.address(mail.id), to: [mail.to], raw, envelopeId: mail.id });
      if (accepted.rejected.length) return await this.refused(mail, accepted.rejected, 'the provider refused the recipient', logging);
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      if (!err.temporary && err.rejected.length) return await this.refused(mail, err.rejected, err.message, logging);
      if (err.temporary && row.attempts < MAX_ATTEMPTS) {
        logging.log.warn({ system_mail_id: mail.id, template: mail.template, attempt: row.attempts, reason: err.message }, 'system mail: temporary failure, will retry');
        return 'retry';
      }
      logging.log.error({ system_mail_id: mail.id, template: mail.template, attempt: row.attempts, reason: err.message }, 'system mail: given up');
      await this.log.finish(mail.id, 'failed', this.clock.now(), err.message.slice(0, 500));
      return 'failed';
    }
    await this.log.finish(mail.id, 'sent', this.clock.now(), null);
    return 'sent';
  }

  /** The provider refused the address itself at once: as good as a hard bounce. */
  private async refused(mail: PlatformMail, rejected: RejectedRecipient[], reason: string, logging: { readonly log: Logger }): Promise<'failed'> {
    const now = this.clock.now();
    if (rejected.some((r) => r.blame === 'recipient')) await this.log.suppress({ address: mail.to.toLowerCase(), reason: 'hard_bounce', system_mail_id: mail.id, now });
    logging.log.warn({ system_mail_id: mail.id, template: mail.template, reason }, 'system mail: refused by the provider');
    await this.log.finish(mail.id, 'failed', now, reason.slice(0, 500));
    return 'failed';
  }
}
