import { headers as natsHeaders } from '@nats-io/transport-node';
import { ROOT_CONTEXT, TraceFlags, createContextKey, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { extractContext, injectContext, messagingAttributes, storedContext, traceparentOf } from './trace-context';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const sampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: false });

describe('trace context in NATS headers', () => {
  describe('with telemetry off (the API without a propagator)', () => {
    it('makes no headers and reads none', () => {
      expect(injectContext(undefined, sampled)).toBeUndefined();
      const h = natsHeaders();
      h.set('traceparent', `00-${TRACE_ID}-${SPAN_ID}-01`);
      expect(trace.getSpanContext(extractContext(h))).toBeUndefined();
    });

    it('keeps no traceparent and resumes none', () => {
      expect(traceparentOf(sampled)).toBeNull();
      expect(trace.getSpanContext(storedContext(`00-${TRACE_ID}-${SPAN_ID}-01`, sampled))).toBeUndefined();
    });
  });

  describe('with the W3C propagator', () => {
    beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
    afterAll(() => propagation.disable());

    it('writes traceparent into a header set made for it', () => {
      const h = injectContext(undefined, sampled);
      expect(h?.get('traceparent')).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    });

    it('adds to the headers a message already has, keeping them', () => {
      const h = natsHeaders();
      h.set('Mailroom-Stored-Seal', 'seal');
      expect(injectContext(h, sampled)).toBe(h);
      expect(h.get('Mailroom-Stored-Seal')).toBe('seal');
      expect(h.get('traceparent')).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    });

    it('reads back the remote context, tracestate included', () => {
      const h = natsHeaders();
      h.set('traceparent', `00-${TRACE_ID}-${SPAN_ID}-01`);
      h.set('tracestate', 'vendor=1');
      const span = trace.getSpanContext(extractContext(h));
      expect(span).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: true });
      expect(span?.traceState?.get('vendor')).toBe('1');
    });

    it('keeps the traceparent of a context with a span, none of one without', () => {
      expect(traceparentOf(sampled)).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
      expect(traceparentOf(ROOT_CONTEXT)).toBeNull();
    });

    it('resumes stored work in the kept trace, over the base without its span (its other values kept)', () => {
      const key = createContextKey('module');
      const base = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.SAMPLED }).setValue(key, 'webhooks');
      const resumed = storedContext(traceparentOf(sampled), base);
      expect(trace.getSpanContext(resumed)).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: true });
      expect(resumed.getValue(key)).toBe('webhooks');
    });

    it('resumes work with no traceparent, or a malformed one, in no trace (not the base one)', () => {
      const base = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.SAMPLED });
      expect(trace.getSpanContext(storedContext(null, base))).toBeUndefined();
      expect(trace.getSpanContext(storedContext('00-zz-not-one-01', base))).toBeUndefined();
    });

    it('starts a new trace for a message without context or with a malformed one', () => {
      expect(trace.getSpanContext(extractContext(undefined))).toBeUndefined();
      const h = natsHeaders();
      h.set('traceparent', 'not-a-traceparent');
      expect(trace.getSpanContext(extractContext(h))).toBeUndefined();
    });
  });

  it('names the messaging operation after the semantic conventions, nothing of the payload', () => {
    expect(messagingAttributes('send', 'work.mail.inbound', { 'messaging.message.id': 'raw_1' })).toEqual({
      'messaging.system': 'nats',
      'messaging.destination.name': 'work.mail.inbound',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.message.id': 'raw_1',
    });
  });
});
