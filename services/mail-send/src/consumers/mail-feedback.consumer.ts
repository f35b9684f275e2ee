/** Consumer of `mail.feedback`: reports received at the bounce domain; one that overtook the sent record is redelivered shortly. */
import { runConsumer, type Bus, type ObjectStore, type RunningConsumer } from '@mailroom/messaging';
import type { FeedbackHandler } from '../domain/feedback-handler';

export function startFeedbackConsumer(bus: Bus, handler: FeedbackHandler, raw: ObjectStore): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject: 'mail.feedback',
    durable: 'mail-send--feedback',
    concurrency: 8,
    handler: async (item, meta) => {
      const bytes = item.raw !== undefined ? Buffer.from(item.raw, 'base64') : await raw.getBlob(item.raw_id);
      if (!bytes) {
        meta.log.error({ raw_id: item.raw_id }, 'report missing from the object store: terminated');
        return { term: 'raw report missing' };
      }
      const outcome = await handler.handle(item, Buffer.from(bytes), meta.log);
      // The report overtook our record of the hand-over (milliseconds, usually): asked again soon.
      if (outcome === 'not-sent-yet') return { nak: Math.min(5_000, 250 * 2 ** Math.min(5, meta.deliveryCount - 1)) };
      meta.log.debug({ raw_id: item.raw_id, outcome }, 'report handled');
      return 'ack';
    },
  });
}
