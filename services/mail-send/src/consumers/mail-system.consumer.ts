/** Consumer of `mail.system`: acks once the mail is handed over (or given up), naks a temporary failure with backoff. */
import { backoffMs, runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { SystemMailer } from '../domain/system-mail/system-mailer';

export function startSystemMailConsumer(bus: Bus, mailer: SystemMailer): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject: 'mail.system',
    durable: 'mail-send--system',
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
