/**
 * RPC spans against the real server, under a sampler that follows the parent (the platform's
 * default): a sampled caller's call is a client span and the callee's a server span below it;
 * a call in a trace sampled out makes no span on either side and passes the caller's context
 * on as it is, so what the callee does is in the same (unrecorded) trace.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, context, propagation, trace, type Context, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import { newId } from '@mailroom/contracts';
import { setSamplerFollowsParent } from '@mailroom/platform';
import { connectTestBus, createTestContext, type TestContext } from '@mailroom/testing';
import { callRpc, serveRpc, type Bus, type RpcHandlers } from '../src';

let ctx: TestContext;
let bus: Bus;
const exported = new InMemorySpanExporter();
// The sampler of the process, switched by a test: one that follows the parent, or one that decides on its own.
let sampler: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() });
const switching: Sampler = { shouldSample: (...args) => sampler.shouldSample(...args), toString: () => 'switching' };

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const parentOf = (traceFlags: TraceFlags): Context => trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags, isRemote: true });

// The span context the handler ran in.
let seen: SpanContext | undefined;
let fail = false;
const now = new Date().toISOString();
// Only the operation called here is served.
const handlers = {
  'orgs.organization.get': async () => {
    seen = trace.getSpanContext(context.active());
    if (fail) throw new Error('database exploded');
    return { id: newId('organization'), name: 'n', plan: 'free', status: 'active', default_env_id: newId('environment'), created_at: now, updated_at: now };
  },
} as unknown as RpcHandlers<'orgs'>;
const call = () => ({ auth: { kind: 'service' as const, service: 'test' }, requestId: newId('request') });

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new TracerProvider({ sampler: switching, spanProcessors: [new SimpleSpanProcessor({ exporter: exported })] }));
  setSamplerFollowsParent(true);
  ctx = await createTestContext();
  bus = await connectTestBus(ctx.env);
});

afterAll(async () => {
  setSamplerFollowsParent(false);
  trace.disable();
  propagation.disable();
  context.disable();
  await bus?.drain();
  await ctx?.cleanup();
});

beforeEach(() => {
  exported.reset();
  seen = undefined;
  fail = false;
});

async function callIn(parent: Context): Promise<void> {
  const server = serveRpc(bus, 'orgs', handlers);
  try {
    await context.with(parent, () => callRpc(bus, 'orgs.organization.get', {}, call()));
  } finally {
    await server.stop();
  }
}

describe('RPC spans', () => {
  it('records a sampled call as a client span and the answer as a server span below it, in the caller trace', async () => {
    await callIn(parentOf(TraceFlags.SAMPLED));
    const spans = exported.getFinishedSpans();
    const client = spans.find((s) => s.name === 'rpc orgs.organization.get' && s.kind === SpanKind.CLIENT)!;
    const server = spans.find((s) => s.name === 'rpc orgs.organization.get' && s.kind === SpanKind.SERVER)!;
    expect([client.spanContext().traceId, client.parentSpanContext?.spanId]).toEqual([TRACE_ID, SPAN_ID]);
    expect([server.spanContext().traceId, server.parentSpanContext?.spanId]).toEqual([TRACE_ID, client.spanContext().spanId]);
    expect(server.attributes).toMatchObject({ 'messaging.system': 'nats', 'rpc.method': 'orgs.organization.get' });
    expect(seen).toMatchObject({ traceId: TRACE_ID, spanId: server.spanContext().spanId });
  });

  it('makes no span for a call in a trace sampled out, and serves it in the caller context', async () => {
    await callIn(parentOf(TraceFlags.NONE));
    expect(exported.getFinishedSpans()).toEqual([]);
    // The callee's work (its queries, its own calls) is in the caller's trace, unsampled.
    expect(seen).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.NONE });
  });

  it('still makes the spans under a sampler that decides on its own, which may sample a child of an unsampled span', async () => {
    sampler = new AlwaysOnSampler();
    setSamplerFollowsParent(false);
    try {
      await callIn(parentOf(TraceFlags.NONE));
    } finally {
      sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() });
      setSamplerFollowsParent(true);
    }
    expect(exported.getFinishedSpans().map((s) => s.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
    expect(seen).toMatchObject({ traceId: TRACE_ID, traceFlags: TraceFlags.SAMPLED });
  });

  it('marks a failed call on a sampled span', async () => {
    fail = true;
    await expect(callIn(parentOf(TraceFlags.SAMPLED))).rejects.toMatchObject({ code: 'internal_error' });
    expect(exported.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER)?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('answers a failed call in a trace sampled out as any other, with no span', async () => {
    fail = true;
    await expect(callIn(parentOf(TraceFlags.NONE))).rejects.toMatchObject({ code: 'internal_error' });
    expect(exported.getFinishedSpans()).toEqual([]);
  });
});
