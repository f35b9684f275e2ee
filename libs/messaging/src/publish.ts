/** Publishing facts to JetStream, each with its id as msgID so a retried publish is stored once. */
import { eventEnvelope, eventSubject, FACTS, type EventEnvelope, type Fact, type FactSubject } from '@mailroom/contracts';
import type { PubAck } from '@nats-io/jetstream';
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
