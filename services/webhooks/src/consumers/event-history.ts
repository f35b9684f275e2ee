/**
 * Reading past events back from the durable EVENTS stream (kept 15 days) with an ordered
 * consumer, for recovery. The stream holds every tenant's events: callers filter.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import { eventEnvelope } from '@mailroom/contracts';
import { decodeJson, type Bus } from '@mailroom/messaging';
import type { EventHistory } from '../domain/ports';

export function streamEventHistory(bus: Bus): EventHistory {
  return {
    async read(since, until, onEvent) {
      const consumer = await bus.js.consumers.get(bus.ns.stream('EVENTS'), {
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: since.toISOString(),
      });
      const info = await consumer.info();
      if (info.num_pending === 0) return;
      const end = until.getTime();
      const messages = await consumer.consume({ max_messages: 512 });
      try {
        for await (const m of messages) {
          // Stream time past the window: everything after it is later still.
          if (m.time.getTime() > end + 60_000) break;
          let parsed;
          try {
            parsed = eventEnvelope.safeParse(decodeJson(m.data));
          } catch {
            parsed = undefined;
          }
          if (parsed?.success) await onEvent(parsed.data);
          if (m.info.pending === 0) break;
        }
      } finally {
        await messages.close().catch(() => {});
      }
    },
  };
}
