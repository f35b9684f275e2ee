/** Consumer of `mail.outbound`: acks once the hand-over (or the bounce) is recorded; counts each hand-over's outcome. */
import { backoffMs, runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import { SERVICE_ATTRIBUTE, meterOf } from '@mailroom/platform';
import type { OutboundSender, SendOutcome } from '../domain/outbound';

export function startOutboundConsumer(bus: Bus, sender: OutboundSender, concurrency: number): Promise<RunningConsumer> {
  const sends = meterOf().createCounter('mailroom.mail.sends', {
    description: 'Outbound hand-overs by outcome: sent (the provider accepted it), already-sent (a repeat), bounced (refused for good), retry (tried again later), error (failed unexpectedly, tried again)',
    unit: '{message}',
  });
  // One attributes object per outcome, made once.
  const of = (outcome: SendOutcome | 'error') => ({ 'mailroom.send.outcome': outcome, [SERVICE_ATTRIBUTE]: 'mail-send' });
  const outcomes: Record<SendOutcome | 'error', Record<string, string>> = { sent: of('sent'), 'already-sent': of('already-sent'), bounced: of('bounced'), retry: of('retry'), error: of('error') };
  return runConsumer(bus, {
    subject: 'mail.outbound',
    durable: 'mail-send--outbound',
    concurrency,
    // A relay may take its time answering DATA; the hand-over must not be redelivered meanwhile.
    ackWaitMs: 120_000,
    handler: async (job, meta) => {
      let outcome: SendOutcome;
      try {
        outcome = await sender.send(job, meta.deliveryCount, meta);
      } catch (err) {
        sends.add(1, outcomes.error);
        throw err;
      }
      sends.add(1, outcomes[outcome]);
      if (outcome === 'retry') return { nak: backoffMs(meta.deliveryCount, 15 * 60_000) };
      if (meta.logs('debug')) meta.log.debug({ message_id: job.message_id, outcome }, 'outbound handled');
      return 'ack';
    },
  });
}
