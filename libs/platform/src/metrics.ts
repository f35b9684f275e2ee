/**
 * OpenTelemetry metrics: one meter provider per process, registered as the API's global, read
 * by a Prometheus reader (rendered on the health port's /metrics, health.ts) and, when
 * configured, pushed over OTLP/HTTP. OTEL_METRICS_EXPORTER lists the readers (`prometheus`,
 * `otlp`, or `none`); unset, it is `prometheus`, plus `otlp` when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set. With `none` the SDK is never loaded and every instrument is the API's no-op.
 *
 * In the all-in-one process the modules share the provider: every measurement carries the
 * module that made it in `mailroom.service` (also in a service's own process, so a dashboard
 * reads the same in both forms). Instruments are made where they are recorded (the edges),
 * through `meterOf()`, once, when the code that records them starts.
 */
import { metrics, type Meter } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The attribute naming the module that recorded a measurement (a service's name). */
export const SERVICE_ATTRIBUTE = 'mailroom.service';

/** The meter every instrument of the platform comes from (its scope in the output). */
export const METER_NAME = 'mailroom';

export type MetricsReaderName = 'prometheus' | 'otlp';

/** Histogram boundaries in seconds (the semantic conventions' advice for HTTP durations). */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** How often values read from outside the process (consumer info, outbox backlog) are read again, at most. */
export const DEFAULT_SAMPLE_INTERVAL_MS = 15_000;

export interface ProcessMetrics {
  readers: MetricsReaderName[];
  /** How often sampled values (consumer lag, outbox backlog) are read; METRICS_SAMPLE_INTERVAL_MS. */
  sampleIntervalMs: number;
  /** Answers a scrape in the Prometheus text format; undefined without the Prometheus reader. */
  scrape?: (req: IncomingMessage, res: ServerResponse) => void;
  shutdown(): Promise<void>;
}

/**
 * The readers `env` asks for: OTEL_METRICS_EXPORTER (comma-separated: prometheus, otlp,
 * none), else prometheus, and otlp when an OTLP endpoint is configured. Unknown names are an error.
 */
export function metricsReaders(env: Record<string, string | undefined>): MetricsReaderName[] {
  const listed = env.OTEL_METRICS_EXPORTER?.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (!listed?.length) return env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ? ['prometheus', 'otlp'] : ['prometheus'];
  const unknown = listed.filter((name) => name !== 'prometheus' && name !== 'otlp' && name !== 'none');
  if (unknown.length) throw new Error(`OTEL_METRICS_EXPORTER: unknown exporter ${unknown.join(', ')}; use prometheus, otlp or none`);
  if (listed.includes('none')) return [];
  return [...new Set(listed as MetricsReaderName[])];
}

/** METRICS_SAMPLE_INTERVAL_MS: a whole number of milliseconds from 100, default 15 s. */
export function sampleIntervalMs(env: Record<string, string | undefined>): number {
  const raw = env.METRICS_SAMPLE_INTERVAL_MS;
  if (raw === undefined || raw === '') return DEFAULT_SAMPLE_INTERVAL_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100) throw new Error(`METRICS_SAMPLE_INTERVAL_MS must be a whole number of milliseconds, at least 100 (got ${JSON.stringify(raw)})`);
  return ms;
}

let started: ProcessMetrics | undefined;

/** The metrics this process started, if any (none: every instrument is a no-op). */
export function startedMetrics(): ProcessMetrics | undefined {
  return started;
}

/** Whether this process records metrics (a reader is on): work done only to be measured (sampling) is skipped otherwise. */
export function metricsOn(): boolean {
  return (started?.readers.length ?? 0) > 0;
}

/** The platform's meter: the process's provider's, or the API's no-op before (or without) one. */
export function meterOf(): Meter {
  return metrics.getMeter(METER_NAME);
}

/** How often sampled values are read: the process's setting, or the default when metrics were not started. */
export function metricsSampleIntervalMs(): number {
  return started?.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
}

/**
 * Starts the process's metrics once (a second call answers the first's): the provider,
 * named `serviceName` (its resource), with the readers `env` asks for, as the global one.
 */
export function startMetrics(serviceName: string, env: Record<string, string | undefined> = process.env): ProcessMetrics {
  if (started) return started;
  const readers = metricsReaders(env);
  const interval = sampleIntervalMs(env);
  if (!readers.length) return (started = { readers, sampleIntervalMs: interval, shutdown: async () => {} });
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when metrics are on */
  const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const metricReaders: import('@opentelemetry/sdk-metrics').IMetricReader[] = [];
  let scrape: ProcessMetrics['scrape'];
  if (readers.includes('prometheus')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus');
    // No server of its own: the health server answers /metrics with it.
    const prometheus = new PrometheusExporter({ preventServerStart: true });
    metricReaders.push(prometheus);
    scrape = (req, res) => prometheus.getMetricsRequestHandler(req, res);
  }
  if (readers.includes('otlp')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http');
    const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
    // The exporter reads OTEL_EXPORTER_OTLP_METRICS_ENDPOINT itself; the base endpoint is given as the traces' is.
    const exporter = new OTLPMetricExporter(endpoint && !env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ? { url: `${endpoint.replace(/\/$/, '')}/v1/metrics` } : {});
    const every = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    metricReaders.push(new PeriodicExportingMetricReader({ exporter, ...(every > 0 ? { exportIntervalMillis: every, exportTimeoutMillis: Math.min(30_000, every) } : {}) }));
  }
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName }), readers: metricReaders });
  metrics.setGlobalMeterProvider(provider);
  started = {
    readers,
    sampleIntervalMs: interval,
    ...(scrape ? { scrape } : {}),
    shutdown: () => provider.shutdown(),
  };
  return started;
}
