/**
 * Durable pull consumers with explicit acknowledgement. The handler decides, per message:
 * ack (after its database commit), nak with a delay (retryable failure), or term (poison
 * message, with a logged reason; the reason is not sent to the server: NATS 2.9 leaves a
 * `+TERM <reason>` unacknowledged). A thrown error naks with exponential backoff when it is
 * retryable (any non-AppError, or an AppError marked retryable) and terms otherwise.
 * Concurrency is bounded; stop() finishes in-flight messages before returning.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, type ConsumerConfig, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { AppError, CONSUMED, consumerFilter, type ConsumableSubject, type ConsumedPayload, type ConsumerName } from '@mailroom/contracts';
import { moduleContext } from '@mailroom/platform';
import type { Level, Logger } from 'pino';
import type { Bus } from './bus';
import { decodeJson } from './codec';
import { fromItsPublisher } from './publish';
import { watchConsumer } from './consumer-metrics';
import { extractContext, messagingAttributes, tracer } from './trace-context';

export type Outcome = 'ack' | { nak: number } | { term: string };

export interface MessageMeta {
  subject: string;
  seq: number;
  deliveryCount: number;
  /** This message's logger, made on first use (a child logger per message is not free): read it only to log. */
  readonly log: Logger;
  /** Whether a line at `level` would be written; check it before building a debug line. */
  logs(level: Level): boolean;
  msg: JsMsg;
}

export interface ConsumerOptions<S extends ConsumableSubject> {
  /** What it reads (contracts CONSUMABLE): the stream and the payload's schema come with it. */
  subject: S;
  /** `<service>--<what>`, from the catalog (contracts CONSUMERS), which grants it on the bus; `test--` ones exist only in tests. */
  durable: ConsumerName | `test--${string}`;
  /** Un-prefixed subject filter (one: NATS 2.9 has no multi-filter consumers); default: the catalog's (contracts CONSUMERS), else the whole stream. */
  filterSubject?: string;
  handler: (payload: ConsumedPayload<S>, meta: MessageMeta) => Promise<Outcome | void>;
  concurrency?: number;
  ackWaitMs?: number;
  /**
   * How long a message may be kept: while it waits for a handler or a handler works on it,
   * the server is told it is still being worked on, so a handler slower than the ack wait (a
   * hand-over to a slow mail server), or a message waiting behind such handlers, is not given
   * to another handler meanwhile; past this it is no longer told, and the message is
   * redelivered. Default 10 ack waits.
   */
  maxWorkingMs?: number;
  /** Deliveries before the server stops trying; -1 = unlimited. */
  maxDeliver?: number;
  /** Backoff cap for naks of thrown errors. */
  maxBackoffMs?: number;
  deliverPolicy?: 'all' | 'new';
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export function backoffMs(deliveryCount: number, maxMs = 300_000): number {
  const base = Math.min(maxMs, 1_000 * 2 ** Math.max(0, deliveryCount - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export async function ensureConsumer(bus: Bus, opts: Pick<ConsumerOptions<ConsumableSubject>, 'subject' | 'durable' | 'filterSubject' | 'ackWaitMs' | 'maxDeliver' | 'deliverPolicy'>): Promise<void> {
  const stream = bus.ns.stream(CONSUMED[opts.subject].stream);
  const durable = bus.ns.consumer(opts.durable);
  const filter = opts.filterSubject ?? consumerFilter(opts.durable);
  const config: Partial<ConsumerConfig> = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(opts.ackWaitMs ?? 30_000),
    max_deliver: opts.maxDeliver ?? -1,
    deliver_policy: opts.deliverPolicy === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
    ...(filter ? { filter_subject: bus.ns.subject(filter) } : {}),
  };
  try {
    await bus.jsm.consumers.info(stream, durable);
    const { deliver_policy: _fixed, durable_name: _name, ...updatable } = config;
    await bus.jsm.consumers.update(stream, durable, updatable);
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10014) throw err;
    await bus.jsm.consumers.add(stream, config);
  }
}

export async function runConsumer<S extends ConsumableSubject>(bus: Bus, opts: ConsumerOptions<S>): Promise<RunningConsumer> {
  await ensureConsumer(bus, opts);
  const schema = CONSUMED[opts.subject].schema;
  const log = bus.log.child({ component: 'consumer', consumer: opts.durable });
  const concurrency = opts.concurrency ?? 8;
  const inFlight = new Set<Promise<void>>();
  /** Messages received and waiting for a handler, oldest first. */
  const waiting: JsMsg[] = [];
  let stopped = false;
  let messages: ConsumerMessages | undefined;
  /**
   * Messages received and not yet answered, waiting for a handler or in one, with when each
   * was received: the server is told they are still being worked on (see keepAlive), so it
   * gives none of them to a second handler meanwhile. (At most the consumer's max_ack_pending,
   * the server's default of 1,000, can be out at once.)
   */
  const held = new Map<JsMsg, number>();
  const ackWaitMs = opts.ackWaitMs ?? 30_000;
  const maxWorkingMs = opts.maxWorkingMs ?? 10 * ackWaitMs;
  // Every quarter ack wait, each message held for a quarter ack wait or more is marked as
  // being worked on (its ack wait starts again): none goes half an ack wait without it. A
  // message answered sooner costs nothing. Past maxWorkingMs it is no longer marked.
  const keepAlive = setInterval(() => {
    const now = Date.now();
    const tick = ackWaitMs / 4;
    for (const [m, at] of held) if (now - at >= tick && now - at < maxWorkingMs) m.working();
  }, Math.max(25, Math.floor(ackWaitMs / 4)));
  keepAlive.unref();
  const measured = watchConsumer(bus, bus.ns.stream(CONSUMED[opts.subject].stream), bus.ns.consumer(opts.durable), opts.durable);

  /**
   * Handles a message in a consumer span, the child of its publisher's span (the context in
   * its headers): a redelivery is another child of the same publish.
   */
  function processTraced(m: JsMsg): Promise<void> {
    const subject = bus.ns.unprefix(m.subject);
    // In the consuming service's context (its service.name), below the publisher's span.
    const parent = extractContext(m.headers, moduleContext(opts.durable.split('--')[0]!));
    const msgId = m.headers?.get('Nats-Msg-Id');
    const span = tracer.startSpan(
      `process ${subject}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: messagingAttributes('process', subject, {
          'messaging.consumer.group.name': opts.durable,
          'messaging.nats.message.delivery_count': m.info.deliveryCount,
          'messaging.nats.stream.sequence': m.seq,
          ...(msgId ? { 'messaging.message.id': msgId } : {}),
        }),
      },
      parent,
    );
    return context.with(trace.setSpan(parent, span), () => process(m, span)).finally(() => span.end());
  }

  async function process(m: JsMsg, span: Span): Promise<void> {
    const subject = bus.ns.unprefix(m.subject);
    // The message's logger is made only if something is logged: a child logger per message is not free.
    let child: Logger | undefined;
    const meta: MessageMeta = {
      subject,
      seq: m.seq,
      deliveryCount: m.info.deliveryCount,
      get log() {
        return (child ??= log.child({ subject, seq: m.seq, delivery: m.info.deliveryCount }));
      },
      logs: (level) => log.isLevelEnabled(level),
      msg: m,
    };
    // Sealed by the subject's one publisher, or not taken (a consumer can be made to deliver anything here).
    if (!fromItsPublisher(bus, m)) {
      meta.log.error('not sealed by its subject\'s publisher: terminated');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'not sealed by its publisher' });
      m.term();
      return;
    }
    let payload: unknown;
    try {
      payload = decodeJson(m.data);
    } catch {
      meta.log.error('not JSON: terminated');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'not JSON' });
      m.term();
      return;
    }
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      meta.log.error({ issues: parsed.error.issues.slice(0, 5) }, 'payload does not match its contract: terminated');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'payload does not match its contract' });
      m.term();
      return;
    }
    try {
      const outcome = (await opts.handler(parsed.data, meta)) ?? 'ack';
      span.setAttribute('mailroom.consumer.outcome', outcome === 'ack' ? 'ack' : 'nak' in outcome ? 'nak' : 'term');
      if (outcome === 'ack') m.ack();
      else if ('nak' in outcome) m.nak(outcome.nak);
      else {
        meta.log.warn({ reason: outcome.term }, 'terminated');
        m.term();
      }
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (err instanceof Error) span.setAttribute('error.type', err instanceof AppError ? err.code : err.name);
      const retryable = !(err instanceof AppError) || err.retryable;
      if (retryable) {
        const delay = backoffMs(meta.deliveryCount, opts.maxBackoffMs);
        meta.log.warn({ err, delay_ms: delay }, 'handler failed: retrying later');
        m.nak(delay);
      } else {
        meta.log.error({ err }, 'handler failed permanently: terminated');
        m.term();
      }
    }
  }

  /** Starts handlers for waiting messages while there is room (and not once stopping). */
  function pump(): void {
    while (!stopped && waiting.length && inFlight.size < concurrency) {
      const m = waiting.shift()!;
      const p = processTraced(m).finally(() => {
        held.delete(m);
        inFlight.delete(p);
        pump();
      });
      inFlight.add(p);
    }
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        const consumer = await bus.js.consumers.get(bus.ns.stream(CONSUMED[opts.subject].stream), bus.ns.consumer(opts.durable));
        messages = await consumer.consume({ max_messages: Math.max(concurrency, 1) });
        // Every message is taken from the client as it arrives and held from then on: the
        // client pulls ahead of the handlers, and a message waiting for one is kept too.
        for await (const m of messages) {
          if (m.info.deliveryCount > 1) measured.redelivered();
          held.set(m, Date.now());
          waiting.push(m);
          pump();
        }
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'consumer interrupted; resuming');
        await new Promise((r) => setTimeout(r, 1_000));
        await ensureConsumer(bus, opts).catch(() => {});
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 250));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await messages?.close().catch(() => {});
      await loop;
      // Not started: given back for another instance (or the next start) at once.
      for (const m of waiting.splice(0)) {
        held.delete(m);
        m.nak();
      }
      await Promise.allSettled([...inFlight]);
      clearInterval(keepAlive);
      measured.stop();
    },
  };
}
