/**
 * Publishing to the stored subjects (events, facts, work items), each with an id as msgID so a
 * retried publish is stored once, and sealed for its readers (stored-seal.ts).
 */
import { eventEnvelope, eventSubject, FACTS, HEADERS, type EventEnvelope, type Fact, type FactSubject } from '@mailroom/contracts';
import type { JsMsg, PubAck } from '@nats-io/jetstream';
import { errors as natsErrors, headers as natsHeaders } from '@nats-io/transport-node';
import type { Bus } from './bus';
import { encodeJson } from './codec';
import { injectContext, inSpan, startPublishSpan } from './trace-context';

/** Publishes `data` on the stored subject `subject` (un-prefixed), sealed when the bus holds its key. */
export async function publishStored(bus: Bus, subject: string, data: Uint8Array, opts: { msgID: string; timeout?: number }): Promise<PubAck> {
  const wire = bus.ns.subject(subject);
  const seal = bus.stored?.seal(subject, wire, data);
  const span = startPublishSpan(subject, opts.msgID);
  return inSpan(span, async () => {
    let h = seal ? natsHeaders() : undefined;
    if (h && seal) h.set(HEADERS.storedSeal, seal);
    // The publish span's context rides on the message: its consumer's span is the child of this one.
    h = injectContext(h);
    const ack = await bus.js.publish(wire, data, { msgID: opts.msgID, ...(opts.timeout ? { timeout: opts.timeout } : {}), ...(h ? { headers: h } : {}) });
    if (span.isRecording()) span.setAttributes({ 'messaging.nats.stream.sequence': ack.seq, 'messaging.nats.duplicate': ack.duplicate });
    return ack;
  });
}

/** Whether a stored message read from the bus comes from its subject's publisher; always, on a bus that holds no keys. */
export function fromItsPublisher(bus: Bus, m: Pick<JsMsg, 'subject' | 'data' | 'headers'>): boolean {
  if (!bus.stored) return true;
  return bus.stored.check(bus.ns.unprefix(m.subject), m.subject, m.data, m.headers?.get(HEADERS.storedSeal) || undefined);
}

/** Publishes a public event of the spec; the envelope is validated first. */
export async function publishEvent(bus: Bus, envelope: EventEnvelope): Promise<PubAck> {
  const valid = eventEnvelope.parse(envelope);
  return publishStored(bus, eventSubject(valid.type), encodeJson(valid), { msgID: valid.id });
}

export async function publishFact<S extends FactSubject>(bus: Bus, subject: S, payload: Fact<S>, msgId: string): Promise<PubAck> {
  const valid = FACTS[subject].parse(payload);
  return publishStored(bus, subject, encodeJson(valid), { msgID: msgId });
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
