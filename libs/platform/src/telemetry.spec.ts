import path from 'node:path';
import { exportToCollector } from '../test/otlp-collector';
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { samplerFollowsParent, serviceNameOf, setSamplerFollowsParent, startTelemetry, unsampledTrace } from './telemetry';

// The SDK loads modules with dynamic import(), which jest's VM refuses: the export runs in a
// real Node process, from the build (npm test builds first).
const CHILD = `
  const { startTelemetry } = require(${JSON.stringify(path.resolve(__dirname, '../dist/telemetry.js'))});
  const t = startTelemetry('mailroom-test', { OTEL_EXPORTER_OTLP_ENDPOINT: process.argv[1] });
  const { trace } = require('@opentelemetry/api');
  trace.getTracer('test').startActiveSpan('work', (span) => span.end());
  t.shutdown().then(() => process.exit(t.enabled ? 0 : 3));
`;

// Tracing on, then the process's metrics (as a service starts them): which provider is the
// global one, and whether a span the sampler left out counts as a trace sampled out.
const SAMPLING_CHILD = (sampler: string) => `
  process.env.OTEL_TRACES_SAMPLER = ${JSON.stringify(sampler)};
  process.env.OTEL_TRACES_SAMPLER_ARG = '0';
  const { startTelemetry, unsampledTrace } = require(${JSON.stringify(path.resolve(__dirname, '../dist/telemetry.js'))});
  const { startMetrics } = require(${JSON.stringify(path.resolve(__dirname, '../dist/metrics.js'))});
  const t = startTelemetry('mailroom-test', { OTEL_EXPORTER_OTLP_ENDPOINT: process.argv[1] });
  const { context, metrics, trace } = require('@opentelemetry/api');
  const m = startMetrics('mailroom-test', { OTEL_METRICS_EXPORTER: 'prometheus' });
  metrics.getMeter('mailroom').createCounter('probe').add(1);
  const unsampled = trace.getTracer('test').startActiveSpan('work', (span) => {
    const out = unsampledTrace(context.active());
    span.end();
    return out;
  });
  const answer = (text) => fetch(process.argv[1] + '/answer', { method: 'POST', body: text });
  m.scrape({ url: '/metrics', headers: {} }, {
    setHeader() {},
    writeHead() { return this; },
    statusCode: 200,
    end: (page) => answer(JSON.stringify({ unsampled, scraped: String(page).includes('probe') }))
      .then(() => t.shutdown()).then(() => process.exit(0)),
  });
`;

describe('telemetry', () => {
  it('names a process after the service its entry runs', () => {
    expect(serviceNameOf('/app/services/mail-send/dist/main.js')).toBe('mail-send');
    expect(serviceNameOf('/app/apps/all-in-one/dist/main.js')).toBe('mailroom');
    expect(serviceNameOf(undefined)).toBe('mailroom');
  });

  it('is off, and loads nothing, without an endpoint', async () => {
    const t = startTelemetry('svc', {});
    expect(t.enabled).toBe(false);
    await t.shutdown();
  });

  it("leaves the process's metrics to startMetrics: its provider is the global one with tracing on", async () => {
    const received = await exportToCollector(SAMPLING_CHILD('parentbased_traceidratio'));
    const answer = JSON.parse(received.find((r) => r.url === '/answer')!.body);
    expect(answer.scraped).toBe(true);
  });

  it('tells a trace sampled out under a sampler that follows the parent, and only there', async () => {
    expect([undefined, 'parentbased_traceidratio', 'parentbased_always_on', 'traceidratio', 'always_on'].map((s) => samplerFollowsParent({ OTEL_TRACES_SAMPLER: s }))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    // Started by a sampler that follows the parent and samples no root: sampled out.
    const parentBased = JSON.parse((await exportToCollector(SAMPLING_CHILD('parentbased_traceidratio'))).find((r) => r.url === '/answer')!.body);
    expect(parentBased.unsampled).toBe(true);
    // A sampler that decides on its own might sample a child: not said to be sampled out.
    const own = JSON.parse((await exportToCollector(SAMPLING_CHILD('traceidratio'))).find((r) => r.url === '/answer')!.body);
    expect(own.unsampled).toBe(false);
  });

  it('counts a context as sampled out only by its span flags, and never with tracing off', () => {
    const span = (traceFlags: number) => trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags });
    expect(unsampledTrace(span(TraceFlags.NONE))).toBe(false);
    setSamplerFollowsParent(true);
    try {
      expect([unsampledTrace(span(TraceFlags.NONE)), unsampledTrace(span(TraceFlags.SAMPLED)), unsampledTrace(ROOT_CONTEXT)]).toEqual([true, false, false]);
    } finally {
      setSamplerFollowsParent(false);
    }
  });

  it('exports spans over OTLP/HTTP to the configured collector', async () => {
    const received = await exportToCollector(CHILD);
    const traces = received.find((r) => r.url === '/v1/traces');
    expect(traces).toBeDefined();
    expect(traces!.body).toContain('mailroom-test');
  });
});
