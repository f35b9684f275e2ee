import path from 'node:path';
import { exportToCollector } from '../test/otlp-collector';
import { DEFAULT_SAMPLE_INTERVAL_MS, metricsReaders, sampleIntervalMs } from './metrics';

// As telemetry.spec.ts: the SDK's exporters load modules jest's VM refuses, so the export runs
// in a real Node process, from the build. Shutdown flushes the periodic reader.
const CHILD = `
  const { startMetrics, meterOf } = require(${JSON.stringify(path.resolve(__dirname, '../dist/metrics.js'))});
  const m = startMetrics('mailroom-test', { OTEL_EXPORTER_OTLP_ENDPOINT: process.argv[1], OTEL_METRICS_EXPORTER: 'otlp' });
  meterOf().createCounter('mailroom.test.things').add(3, { 'mailroom.service': 'tester' });
  m.shutdown().then(() => process.exit(m.readers.join() === 'otlp' && !m.scrape ? 0 : 3));
`;

describe('metrics readers', () => {
  it('is Prometheus alone by default, and OTLP too when an OTLP endpoint is configured', () => {
    expect(metricsReaders({})).toEqual(['prometheus']);
    expect(metricsReaders({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['prometheus', 'otlp']);
    expect(metricsReaders({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://collector:4318/v1/metrics' })).toEqual(['prometheus', 'otlp']);
  });

  it('is what OTEL_METRICS_EXPORTER lists, none being none at all', () => {
    expect(metricsReaders({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual(['otlp']);
    expect(metricsReaders({ OTEL_METRICS_EXPORTER: ' Prometheus , otlp,prometheus' })).toEqual(['prometheus', 'otlp']);
    expect(metricsReaders({ OTEL_METRICS_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual([]);
    expect(metricsReaders({ OTEL_METRICS_EXPORTER: '' })).toEqual(['prometheus']);
  });

  it('refuses an exporter it does not know, naming it', () => {
    expect(() => metricsReaders({ OTEL_METRICS_EXPORTER: 'prometheus,console' })).toThrow(/unknown exporter console/);
  });
});

describe('sample interval', () => {
  it('defaults to 15 s and takes whole milliseconds from 100', () => {
    expect(sampleIntervalMs({})).toBe(DEFAULT_SAMPLE_INTERVAL_MS);
    expect(sampleIntervalMs({ METRICS_SAMPLE_INTERVAL_MS: '250' })).toBe(250);
    for (const bad of ['50', '1.5', 'soon', '-1']) expect(() => sampleIntervalMs({ METRICS_SAMPLE_INTERVAL_MS: bad })).toThrow(/METRICS_SAMPLE_INTERVAL_MS/);
  });
});

describe('the OTLP reader', () => {
  it('exports the process\'s metrics over OTLP/HTTP to the configured collector, under the process\'s name', async () => {
    const received = await exportToCollector(CHILD);
    const exported = received.filter((r) => r.url === '/v1/metrics');
    expect(exported.length).toBeGreaterThan(0);
    expect(exported.some((r) => r.body.includes('mailroom.test.things') && r.body.includes('mailroom-test') && r.body.includes('tester'))).toBe(true);
  });
});
