/**
 * `node --require ./libs/platform/dist/telemetry-preload.js <entry>` (every start command of
 * the project and its image does this): tracing starts before the entry loads the modules it
 * instruments (http, express, pg). The service name is OTEL_SERVICE_NAME, else the entry's
 * (services/<name>/dist/main.js), else mailroom. Without OTEL_EXPORTER_OTLP_ENDPOINT it does nothing.
 */
import { isMainThread } from 'node:worker_threads';
import { serviceNameOf, startTelemetry } from './telemetry';

// Worker threads inherit --require (mailbox's parse workers): the process traces once, from its main thread.
if (isMainThread) startTelemetry(process.env.OTEL_SERVICE_NAME ?? serviceNameOf(process.argv[1]));
