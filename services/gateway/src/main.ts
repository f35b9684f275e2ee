/** Entry of the gateway service alone: `node services/gateway/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('gateway');
void import('./run.js').then(({ run }) => run(telemetry));
