/**
 * OpenTelemetry bootstrap: an OTLP trace exporter with HTTP, express, pg and undici
 * instrumentation when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing at all when it is
 * not (the API stays a no-op and the SDK is never loaded). It must start before the modules
 * it instruments are loaded: entries are run with `node --require
 * ./libs/platform/dist/telemetry-preload.js`, which starts it first (see that file).
 */
import { TraceFlags, isSpanContextValid, trace, type Context } from '@opentelemetry/api';
import { ModuleOfSpans, exportingByModule } from './telemetry-modules';

export interface Telemetry {
  enabled: boolean;
  shutdown(): Promise<void>;
}

let started: Telemetry | undefined;

/** The telemetry this process started (the preload's), if any. */
export function startedTelemetry(): Telemetry | undefined {
  return started;
}

/** The name of a process that runs the whole platform (the all-in-one). */
export const PLATFORM_SERVICE_NAME = 'mailroom';

/** The service an entry runs: services/<name>/dist/main.js is <name>; anything else is the whole platform. */
export function serviceNameOf(entry: string | undefined): string {
  return /[/\\]services[/\\]([a-z0-9-]+)[/\\]dist[/\\]main\.js$/.exec(entry ?? '')?.[1] ?? PLATFORM_SERVICE_NAME;
}

/** OTEL_TRACE_ROOT_QUERIES=true: database queries outside any span (idle polling) are traced too, each a trace. */
export function tracesRootQueries(env: Record<string, string | undefined>): boolean {
  return env.OTEL_TRACE_ROOT_QUERIES === 'true';
}

/**
 * Whether the sampler OTEL_TRACES_SAMPLER names follows the parent's decision: unset (the
 * SDK's default, parentbased_always_on) or parentbased_*. Under such a sampler nothing below an
 * unsampled span is ever recorded.
 */
export function samplerFollowsParent(env: Record<string, string | undefined>): boolean {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim();
  return !sampler || sampler.startsWith('parentbased_');
}

let followsParent = false;

/**
 * Says whether the tracer provider's sampler follows the parent's decision (what
 * unsampledTrace relies on): startTelemetry says so from OTEL_TRACES_SAMPLER; a process that
 * sets up tracing itself (a test) says so here.
 */
export function setSamplerFollowsParent(follows: boolean): void {
  followsParent = follows;
}

/**
 * Whether work in `ctx` belongs to a trace sampled out: tracing is on, its sampler follows
 * the parent, and the span of `ctx` is valid and not sampled. A span started there would
 * record nothing, and what it would pass on says the same as its parent: such work makes no
 * span of its own and passes `ctx` on as it is (it costs every request, sampled or not,
 * otherwise; docs/benchmarks.md). False with tracing off, with no span, and under a sampler
 * that decides on its own (a child of an unsampled span may be sampled there).
 */
export function unsampledTrace(ctx: Context): boolean {
  if (!followsParent) return false;
  const span = trace.getSpanContext(ctx);
  return span !== undefined && (span.traceFlags & TraceFlags.SAMPLED) === 0 && isSpanContextValid(span);
}

/** The batch processor's settings from the standard OTEL_BSP_* variables (the SDK reads them only for a processor it makes). */
function batchOptions(env: Record<string, string | undefined>) {
  const n = (name: string) => {
    const v = Number(env[name]);
    return env[name] && Number.isFinite(v) && v >= 0 ? v : undefined;
  };
  const opts = {
    scheduledDelayMillis: n('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: n('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: n('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: n('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as Partial<typeof opts>;
}

export function startTelemetry(serviceName: string, env: Record<string, string | undefined> = process.env): Telemetry {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return { enabled: false, shutdown: async () => {} };
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const rootQueries = tracesRootQueries(env);
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` });
  // Each module's spans under its own service.name where one process runs them all (the
  // all-in-one), unless OTEL_SERVICE_NAME names the process; a service's own process is named after it already.
  const modules = new ModuleOfSpans();
  const perModule = !env.OTEL_SERVICE_NAME && serviceName === PLATFORM_SERVICE_NAME;
  const sdk = new NodeSDK({
    serviceName,
    // No meter provider of the SDK's: the process's metrics are startMetrics' (metrics.ts), whose
    // provider must be the global one. Left to itself the SDK makes one from OTEL_METRICS_EXPORTER
    // (OTLP by default) and registers it first, so ours is refused (the /metrics page lost every
    // metric of ours whenever tracing was on), and gives it to the instrumentations, which then
    // record per request what ours already do (HTTP durations) or would not (a pool counter
    // update per connection checkout).
    metricReaders: [],
    // Nor an OTLP log exporter of its own (it makes one from OTEL_LOGS_EXPORTER, OTLP by default):
    // the process logs with pino, to stdout; nothing emits OpenTelemetry log records.
    logRecordProcessors: [],
    spanProcessors: !perModule
      ? [new BatchSpanProcessor({ exporter, ...batchOptions(env) })]
      : [
          modules,
          new BatchSpanProcessor({
            exporter: exportingByModule(exporter, modules, serviceName, (base, module) => base.merge(resourceFromAttributes({ 'service.name': module }))),
            ...batchOptions(env),
          }),
        ],
    instrumentations: [
      new HttpInstrumentation(),
      // Express names the HTTP server span after its route (`GET /api/v1/org`, http.route), and
      // nothing more: a span per middleware and handler cost every request, sampled or not, a
      // span, a context and a listener per layer (bench:gateway, docs/benchmarks.md).
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER] }),
      // Polling (outbox relays, leases, claims) runs outside any request or message: its
      // queries would each be a trace of their own, most of all spans, unless asked for.
      // A query's span, not one more for taking a connection from the pool (the pool's use is
      // in db.client.connection.* metrics, and a wait shows as the gap before the query's span).
      new PgInstrumentation({ requireParentSpan: !rootQueries, ignoreConnectSpans: true }),
      // Webhook deliveries and provider calls (undici, and Node's fetch): a client span, and traceparent sent along.
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  // The SDK reads its sampler from the process's environment.
  setSamplerFollowsParent(samplerFollowsParent(process.env));
  started = { enabled: true, shutdown: () => sdk.shutdown() };
  return started;
}
