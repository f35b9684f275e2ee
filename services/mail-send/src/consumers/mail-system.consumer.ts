/**
 * Consumers of the platform's own mail: `mail.system` (orgs) and `mail.account` (auth), one
 * durable consumer each. Each acks once the mail is handed over (or given up), naks a
 * temporary failure with backoff.
 */
import { backoffMs, runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { SystemMailer } from '../domain/system-mail/system-mailer';

const QUEUES = { 'mail.system': 'mail-send--system', 'mail.account': 'mail-send--account', 'mail.admin': 'mail-send--admin' } as const;

export function startSystemMailConsumer(bus: Bus, mailer: SystemMailer, subject: keyof typeof QUEUES = 'mail.system'): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject,
    durable: QUEUES[subject],
    concurrency: 4,
    ackWaitMs: 120_000,
    handler: async (mail, meta) => {
      const outcome = await mailer.send(mail, meta);
      if (outcome === 'retry') return { nak: backoffMs(meta.deliveryCount, 15 * 60_000) };
      if (meta.logs('debug')) meta.log.debug({ system_mail_id: mail.id, template: mail.template, outcome }, 'system mail handled');
      return 'ack';
    },
  });
}
