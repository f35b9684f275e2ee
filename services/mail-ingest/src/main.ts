/** Entry of the mail-ingest service alone: `node services/mail-ingest/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('mail-ingest');
void import('./run.js').then(({ run }) => run(telemetry));
