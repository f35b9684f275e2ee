/** Entry of the mail-send service alone: `node services/mail-send/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('mail-send');
void import('./run.js').then(({ run }) => run(telemetry));
