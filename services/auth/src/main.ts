/** Entry of the auth service alone: `node services/auth/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('auth');
void import('./run.js').then(({ run }) => run(telemetry));
