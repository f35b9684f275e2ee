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
 * The W3C traceparent of `ctx`'s span, to keep with what is stored for later work (an outbox
 * row, a webhook event): null when it holds no span, and always with telemetry off (the API
 * has no propagator then, and writes nothing).
 */
export function traceparentOf(ctx: Context = context.active()): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent ?? null;
}

/**
 * The context to resume stored work in (an outbox row's publish, a delivery attempt): the
 * trace its kept traceparent names, over `base` without its span (a module's context keeps its
 * name). With none, or one the propagator cannot read, `base` without its span: a trace of its
 * own, never a child of whatever ran before.
 */
export function storedContext(traceparent: string | null | undefined, base: Context = context.active()): Context {
  const root = trace.deleteSpan(base);
  return traceparent ? propagation.extract(root, { traceparent }) : root;
}
