/**
 * `node --require ./libs/platform/dist/telemetry-preload.js <entry>` (every start command of
 * the project and its image does this): tracing starts before the entry loads the modules it
 * instruments (http, express, pg). The service name is OTEL_SERVICE_NAME, else the entry's
 * (services/<name>/dist/main.js), else mailroom. Without OTEL_EXPORTER_OTLP_ENDPOINT it does nothing.
 */
import { serviceNameOf, startTelemetry } from './telemetry';

startTelemetry(process.env.OTEL_SERVICE_NAME ?? serviceNameOf(process.argv[1]));
