/**
 * `webhooks--dispatch`: the durable consumer of every public event (`events.>`). For each
 * event it stores one pending delivery per subscribed enabled endpoint of the event's org
 * and environment, in one statement, then acks; the delivery itself happens later, from
 * the database, so no message is held across an HTTP call. A redelivered message finds
 * its deliveries already there (unique per event and endpoint) and adds nothing.
 */
import { eventEnvelope } from '@mailroom/contracts';
import { runConsumer, type Bus, type RunningConsumer } from '@mailroom/messaging';
import type { Clock } from '@mailroom/platform';
import { storedEvent } from '../domain/endpoints';
import type { WakeDispatcher } from '../domain/ports';
import type { DeliveryRepository } from '../repo/delivery.repository';

export const DISPATCH_CONSUMER = 'webhooks--dispatch';

export function runEventsConsumer(
  bus: Bus,
  deps: { deliveries: DeliveryRepository; clock: Clock; maxAttempts: number; wake: WakeDispatcher; concurrency: number },
): Promise<RunningConsumer> {
  return runConsumer(bus, {
    stream: 'EVENTS',
    durable: DISPATCH_CONSUMER,
    filterSubject: 'events.>',
    schema: eventEnvelope,
    concurrency: deps.concurrency,
    handler: async (envelope) => {
      const created = await deps.deliveries.fanOut(storedEvent(envelope), deps.maxAttempts, deps.clock.now());
      if (created > 0) deps.wake();
      return 'ack';
    },
  });
}
