/** Reads the public events a test run published, from the start of its EVENTS stream. */
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { eventEnvelope, type EventEnvelope } from '@mailroom/contracts';
import { decodeJson, decodeText, type Bus } from '@mailroom/messaging';
import { connectTestBus, TESTS_IDENTITY } from './bus-auth';
import { waitFor } from './wait';

export class EventTap {
  /** Every event seen, in stream order, as parsed by the contract. */
  readonly events: EventEnvelope[] = [];
  /** The raw payloads, to check the wire form. */
  readonly raw: string[] = [];
  private constructor(
    private readonly bus: Bus,
    private readonly messages: ConsumerMessages,
  ) {}

  static async start(env: Record<string, string>): Promise<EventTap> {
    const bus = await connectTestBus(env, TESTS_IDENTITY, 'event-tap');
    const consumer = await bus.js.consumers.get(bus.ns.stream('EVENTS'), { deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume();
    const tap = new EventTap(bus, messages);
    void (async () => {
      for await (const m of messages) {
        tap.raw.push(decodeText(m.data));
        tap.events.push(eventEnvelope.parse(decodeJson(m.data)));
      }
    })();
    return tap;
  }

  async waitFor<T extends EventEnvelope>(match: (e: EventEnvelope) => e is T, timeoutMs?: number): Promise<T>;
  async waitFor(match: (e: EventEnvelope) => boolean, timeoutMs?: number): Promise<EventEnvelope>;
  async waitFor(match: (e: EventEnvelope) => boolean, timeoutMs = 15_000): Promise<EventEnvelope> {
    return waitFor(() => this.events.find(match), { timeoutMs, what: 'an event' });
  }

  async stop(): Promise<void> {
    await this.messages.close().catch(() => undefined);
    await this.bus.drain();
  }
}
