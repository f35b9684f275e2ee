/**
 * Reading past events back from the durable EVENTS stream (kept 15 days) with an ordered
 * consumer, for recovery. The stream holds every tenant's events: callers filter.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import { eventEnvelope } from '@mailroom/contracts';
import { decodeJson, extractContext, fromItsPublisher, traceparentOf, type Bus } from '@mailroom/messaging';
import type { EventHistory } from '../domain/ports';

export function streamEventHistory(bus: Bus): EventHistory {
  return {
    async read(from, until, onEvent, signal) {
      if (signal?.aborted) return;
      const consumer = await bus.js.consumers.get(
        bus.ns.stream('EVENTS'),
        'seq' in from ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.seq } : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: from.time.toISOString() },
      );
      const info = await consumer.info();
      if (info.num_pending === 0) return;
      const end = until.getTime();
      const messages = await consumer.consume({ max_messages: 512 });
      const stop = () => void messages.close().catch(() => {});
      signal?.addEventListener('abort', stop, { once: true });
      try {
        for await (const m of messages) {
          if (signal?.aborted) break;
          // Stream time past the window: everything after it is later still.
          if (m.time.getTime() > end) break;
          let parsed;
          try {
            // Not sealed by its publisher: as good as unreadable.
            parsed = fromItsPublisher(bus, m) ? eventEnvelope.safeParse(decodeJson(m.data)) : undefined;
          } catch {
            parsed = undefined;
          }
          await onEvent(parsed?.success ? parsed.data : undefined, m.seq, parsed?.success ? traceparentOf(extractContext(m.headers)) : null);
          if (m.info.pending === 0) break;
        }
      } finally {
        signal?.removeEventListener('abort', stop);
        await messages.close().catch(() => {});
      }
    },
  };
}
