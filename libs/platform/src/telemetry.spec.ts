import path from 'node:path';
import { exportToCollector } from '../test/otlp-collector';
import { serviceNameOf, startTelemetry } from './telemetry';

// The SDK loads modules with dynamic import(), which jest's VM refuses: the export runs in a
// real Node process, from the build (npm test builds first).
const CHILD = `
  const { startTelemetry } = require(${JSON.stringify(path.resolve(__dirname, '../dist/telemetry.js'))});
  const t = startTelemetry('mailroom-test', { OTEL_EXPORTER_OTLP_ENDPOINT: process.argv[1] });
  const { trace } = require('@opentelemetry/api');
  trace.getTracer('test').startActiveSpan('work', (span) => span.end());
  t.shutdown().then(() => process.exit(t.enabled ? 0 : 3));
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

  it('exports spans over OTLP/HTTP to the configured collector', async () => {
    const received = await exportToCollector(CHILD);
    const traces = received.find((r) => r.url === '/v1/traces');
    expect(traces).toBeDefined();
    expect(traces!.body).toContain('mailroom-test');
  });
});
