/** Publishing facts to JetStream, each with its id as msgID so a retried publish is stored once. */
import { eventEnvelope, eventSubject, FACTS, type EventEnvelope, type Fact, type FactSubject } from '@mailroom/contracts';
import type { PubAck } from '@nats-io/jetstream';
import { errors as natsErrors } from '@nats-io/transport-node';
import type { Bus } from './bus';
import { encodeJson } from './codec';

/** Publishes a public event of the spec; the envelope is validated first. */
export async function publishEvent(bus: Bus, envelope: EventEnvelope): Promise<PubAck> {
  const valid = eventEnvelope.parse(envelope);
  return bus.js.publish(bus.ns.subject(eventSubject(valid.type)), encodeJson(valid), { msgID: valid.id });
}

export async function publishFact<S extends FactSubject>(bus: Bus, subject: S, payload: Fact<S>, msgId: string): Promise<PubAck> {
  const valid = FACTS[subject].parse(payload);
  return bus.js.publish(bus.ns.subject(subject), encodeJson(valid), { msgID: msgId });
}

/**
 * Whether a JetStream publish failed because no stream took it (no responders, which the
 * client reports as JetStream not enabled): then nothing was stored, unlike a publish that
 * timed out, which may have been.
 */
export function storedNothing(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof natsErrors.RequestError && cause.isNoResponders();
}
