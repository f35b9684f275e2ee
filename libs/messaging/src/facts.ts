/**
 * Following a fact stream from a point in time with an ordered (ephemeral) consumer:
 * every instance of a service sees every fact, including those published while it was
 * down, as far back as the stream keeps them. Used by the gateway for revocations.
 */
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { FACTS, type Fact, type FactSubject, type StreamName } from '@mailroom/contracts';
import type { Bus } from './bus';
import { decodeJson } from './codec';
import { fromItsPublisher } from './publish';

class NotSealed extends Error {}

export interface FactWatch {
  stop(): Promise<void>;
  /** Resolves once the facts that existed at start have been read. */
  caughtUp: Promise<void>;
}

export async function watchFacts<S extends FactSubject>(
  bus: Bus,
  stream: StreamName,
  subjects: S[],
  since: Date,
  onFact: (subject: S, fact: Fact<S>) => void,
): Promise<FactWatch> {
  // One filter over the whole stream (NATS 2.9 has no multi-filter consumers); others are skipped here.
  const wanted = new Set<string>(subjects);
  const consumer = await bus.js.consumers.get(bus.ns.stream(stream), {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: since.toISOString(),
  });
  let markCaughtUp!: () => void;
  let done = false;
  const caughtUp = new Promise<void>((r) => (markCaughtUp = r)).then(() => {
    done = true;
  });
  if ((await consumer.info()).num_pending === 0) markCaughtUp();
  const messages: ConsumerMessages = await consumer.consume();
  let lastSeq = 0;
  const loop = (async () => {
    for await (const m of messages) {
      lastSeq = m.seq;
      const subject = bus.ns.unprefix(m.subject) as S;
      if (wanted.has(subject)) read(subject, m);
      // Nothing stored after this one: every fact that existed at start has been read.
      if (m.info.pending === 0) markCaughtUp();
    }
  })();
  // Facts that expire before they are delivered never come: the server then has nothing
  // pending, and what it delivered has been read.
  const poll = setInterval(() => {
    if (done) return clearInterval(poll);
    void consumer
      .info(false)
      .then((i) => {
        if (i.num_pending === 0 && lastSeq >= i.delivered.stream_seq) markCaughtUp();
      })
      .catch(() => {});
  }, 1_000).unref();

  function read(subject: S, m: Parameters<typeof fromItsPublisher>[1] & { data: Uint8Array }) {
    try {
      if (!fromItsPublisher(bus, m)) throw new NotSealed();
      const parsed = FACTS[subject]?.safeParse(decodeJson(m.data));
      if (parsed?.success) onFact(subject, parsed.data as Fact<S>);
      else bus.log.warn({ subject }, 'fact does not match its contract; ignored');
    } catch (err) {
      bus.log.warn({ subject }, err instanceof NotSealed ? 'fact not sealed by its publisher; ignored' : 'fact is not JSON; ignored');
    }
  }
  return {
    caughtUp,
    async stop() {
      clearInterval(poll);
      await messages.close().catch(() => {});
      await loop.catch(() => {});
    },
  };
}
