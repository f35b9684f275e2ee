import { DEFAULT_SAMPLE_INTERVAL_MS, metricsReaders, sampleIntervalMs } from './metrics';

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
