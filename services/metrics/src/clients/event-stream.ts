/**
 * Reading the EVENTS stream from its first message to the last one stored when the read
 * began, with an ordered consumer (no durable state), for a replay. Messages not sealed by
 * their publisher or not matching the envelope are skipped, as the durable consumer terms them.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import { eventEnvelope, type EventEnvelope } from '@mailroom/contracts';
import { decodeJson, fromItsPublisher, type Bus } from '@mailroom/messaging';

export interface EventStreamRead {
  /** Messages read, counted or not. */
  read: number;
  /** Of those, the ones that were not an event of the catalog sealed by its publisher. */
  skipped: number;
}

/** Hands the stream's events to `onBatch` in stream order, `batchSize` at most at a time. */
export async function readEventStream(bus: Bus, batchSize: number, onBatch: (events: EventEnvelope[]) => Promise<void>): Promise<EventStreamRead> {
  const stream = bus.ns.stream('EVENTS');
  const info = await bus.jsm.streams.info(stream);
  const last = info.state.last_seq;
  const result = { read: 0, skipped: 0 };
  if (info.state.messages === 0) return result;
  const consumer = await bus.js.consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: batchSize });
  let batch: EventEnvelope[] = [];
  try {
    for await (const m of messages) {
      result.read++;
      let parsed;
      try {
        parsed = fromItsPublisher(bus, m) ? eventEnvelope.safeParse(decodeJson(m.data)) : undefined;
      } catch {
        parsed = undefined;
      }
      if (parsed?.success) batch.push(parsed.data);
      else result.skipped++;
      const done = m.seq >= last || m.info.pending === 0;
      if (batch.length >= batchSize || done) {
        await onBatch(batch);
        batch = [];
      }
      if (done) break;
    }
  } finally {
    await messages.close().catch(() => {});
  }
  return result;
}
