import { ROOT_CONTEXT, TraceFlags, context, isSpanContextValid, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ClaimedJob } from '../repo/delivery.repository';
import { tracedAttempt } from './attempt';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';

const job = (traceparent?: string | null): ClaimedJob => ({
  id: 1,
  endpoint_id: 'we_1',
  event_id: 'evt_1',
  origin: 'event',
  attempts: 1,
  max_attempts: 10,
  body: Buffer.from('{}'),
  url: 'https://example.com/',
  secret_sealed: Buffer.from('sealed'),
  ...(traceparent === undefined ? {} : { traceparent }),
});

/** The span context active inside the attempt (no SDK: the API's span is its parent's context). */
async function parentSeen(j: ClaimedJob): Promise<SpanContext | undefined> {
  let seen: SpanContext | undefined;
  // Whatever ran before (a claim's round) is never the attempt's parent.
  const before = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'e'.repeat(32), spanId: 'f'.repeat(16), traceFlags: TraceFlags.SAMPLED });
  await context.with(before, () =>
    tracedAttempt(j, async () => {
      seen = trace.getSpanContext(context.active());
      return 'aborted';
    }),
  );
  return seen;
}

describe('an attempt as a span', () => {
  beforeAll(() => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    propagation.disable();
    context.disable();
  });

  it("runs in its event's trace, kept with the event (a retry on any instance, after any restart)", async () => {
    expect(await parentSeen(job(`00-${TRACE_ID}-${SPAN_ID}-01`))).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, isRemote: true });
  });

  it('runs in a trace of its own when its event kept none (telemetry was off), not in what ran before', async () => {
    // No parent: the API's span is the invalid one (the SDK would start a new trace).
    for (const seen of [await parentSeen(job(null)), await parentSeen(job())]) expect(seen && isSpanContextValid(seen)).toBe(false);
  });
});
