/**
 * Trace context on the bus: W3C traceparent/tracestate ride in NATS headers (through the
 * OpenTelemetry propagation API), and publishes and deliveries get spans named and
 * attributed after the OpenTelemetry messaging semantic conventions. With telemetry off the
 * API is a no-op: nothing is injected, no header set is made for it, spans cost nothing.
 * Attributes name subjects, ids and counts only: never a payload, a header's value or a key.
 */
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

export const tracer = trace.getTracer('@mailroom/messaging');

/** Reads a NATS header set as a propagation carrier. */
export const natsHeaderGetter: TextMapGetter<MsgHdrs | undefined> = {
  get: (h, key) => h?.get(key) || undefined,
  keys: (h) => (h ? h.keys() : []),
};

/** Writes into a NATS header set; made on the first write (none when nothing is propagated). */
export interface LazyHeaders {
  h: MsgHdrs | undefined;
}

export const natsHeaderSetter: TextMapSetter<LazyHeaders> = {
  set: (carrier, key, value) => {
    carrier.h ??= natsHeaders();
    carrier.h.set(key, value);
  },
};

/** Puts the context's traceparent/tracestate into `h` (made when there is something to put); returns it. */
export function injectContext(h: MsgHdrs | undefined, ctx: Context = context.active()): MsgHdrs | undefined {
  const carrier: LazyHeaders = { h };
  propagation.inject(ctx, carrier, natsHeaderSetter);
  return carrier.h;
}

/** The context a message was sent in (its traceparent), over `base`; `base` when it carries none. */
export function extractContext(h: MsgHdrs | undefined, base: Context = ROOT_CONTEXT): Context {
  return h ? propagation.extract(base, h, natsHeaderGetter) : base;
}

/** The messaging attributes of an operation on `subject` (un-prefixed, as the catalog names it). */
export function messagingAttributes(operation: 'send' | 'receive' | 'process', subject: string, extra: Attributes = {}): Attributes {
  return {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation === 'send' ? 'publish' : operation,
    ...extra,
  };
}

/** Runs `fn` in a span that ends when it settles, marked as an error when it throws. */
export async function inSpan<T>(span: Span, fn: () => Promise<T>, ctx: Context = context.active()): Promise<T> {
  try {
    return await context.with(trace.setSpan(ctx, span), fn);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    if (err instanceof Error) span.setAttribute('error.type', err.name);
    throw err;
  } finally {
    span.end();
  }
}

/** A producer span for a publish on `subject` (un-prefixed). */
export function startPublishSpan(subject: string, msgId: string | undefined): Span {
  return tracer.startSpan(`publish ${subject}`, {
    kind: SpanKind.PRODUCER,
    attributes: messagingAttributes('send', subject, msgId ? { 'messaging.message.id': msgId } : {}),
  });
}

/**
 * Contexts held in memory by an id (an outbox row's, an event's): the work that follows from
 * it later in this process (a relay, a delivery attempt) is traced in the context it came
 * from. Bounded: the oldest are forgotten first, and work whose context was forgotten (or
 * that another instance picks up) starts a trace of its own. Nothing is held when the
 * context holds no span (telemetry off).
 */
export class HeldContexts {
  private readonly held = new Map<string, Context>();

  constructor(private readonly max = 10_000) {}

  hold(id: string, ctx: Context = context.active()): void {
    if (!trace.getSpanContext(ctx)) return;
    this.held.delete(id);
    this.held.set(id, ctx);
    if (this.held.size > this.max) this.held.delete(this.held.keys().next().value!);
  }

  /** The context held for `id`, if any (kept: later work may need it too). */
  get(id: string): Context | undefined {
    return this.held.get(id);
  }

  /** The context held for `id`, if any, forgotten. */
  take(id: string): Context | undefined {
    const ctx = this.held.get(id);
    this.held.delete(id);
    return ctx;
  }

  get size(): number {
    return this.held.size;
  }
}
