/** Entry of the orgs service alone: `node services/orgs/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('orgs');
void import('./run.js').then(({ run }) => run(telemetry));
