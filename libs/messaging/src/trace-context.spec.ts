import { headers as natsHeaders } from '@nats-io/transport-node';
import { ROOT_CONTEXT, TraceFlags, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { HeldContexts, extractContext, injectContext, messagingAttributes } from './trace-context';

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

    it('holds no context (none is active)', () => {
      const held = new HeldContexts();
      held.hold('evt_1');
      expect(held.size).toBe(0);
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

  it('forgets the oldest held context past its bound', () => {
    const held = new HeldContexts(2);
    held.hold('a', sampled);
    held.hold('b', sampled);
    held.hold('c', sampled);
    expect([held.get('a'), held.get('b') && 'b', held.get('c') && 'c']).toEqual([undefined, 'b', 'c']);
    expect(held.take('b')).toBe(sampled);
    expect(held.get('b')).toBeUndefined();
  });
});
