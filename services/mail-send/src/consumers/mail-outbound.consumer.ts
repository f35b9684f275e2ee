/** Consumer of `mail.outbound`: acks once the hand-over (or the bounce) is recorded. */
import { backoffMs, runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { OutboundSender } from '../domain/outbound';

export function startOutboundConsumer(bus: Bus, sender: OutboundSender, concurrency: number): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject: 'mail.outbound',
    durable: 'mail-send--outbound',
    concurrency,
    // A relay may take its time answering DATA; the hand-over must not be redelivered meanwhile.
    ackWaitMs: 120_000,
    handler: async (job, meta) => {
      const outcome = await sender.send(job, meta.deliveryCount, meta);
      if (outcome === 'retry') return { nak: backoffMs(meta.deliveryCount, 15 * 60_000) };
      if (meta.logs('debug')) meta.log.debug({ message_id: job.message_id, outcome }, 'outbound handled');
      return 'ack';
    },
  });
}
