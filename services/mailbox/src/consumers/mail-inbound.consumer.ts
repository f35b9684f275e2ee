/** Consumer of the `mail.inbound` work queue: acks only after the messages are committed. */
import { runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { InboundStore } from '../domain/inbound';

const MISSING_RAW_RETRIES = 5;

export function startInboundConsumer(bus: Bus, store: InboundStore, concurrency: number): Promise<RunningConsumer> {
  return runConsumer(bus, {
    subject: 'mail.inbound',
    durable: 'mailbox--inbound',
    concurrency,
    // Parsing has its own deadline (twice PARSE_TIMEOUT_MS at worst); this only bounds a stuck handler.
    ackWaitMs: 120_000,
    handler: async (item, meta) => {
      const outcome = await store.store(item, meta);
      if ('missingRaw' in outcome) {
        // The edge stores the raw bytes before it publishes: a missing object is an outage of
        // the object store, or a bug. Retry, then set the item aside loudly.
        if (meta.deliveryCount < MISSING_RAW_RETRIES) return { nak: 5_000 * meta.deliveryCount };
        meta.log.error({ raw_id: item.raw_id }, 'raw message missing from the object store; work item terminated');
        return { term: 'raw message missing' };
      }
      if (meta.logs('debug')) meta.log.debug({ raw_id: item.raw_id, ...outcome }, 'inbound mail stored');
      return 'ack';
    },
  });
}
