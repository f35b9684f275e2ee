/** Entry of the mailbox service alone: `node services/mailbox/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, express, pg) are loaded.
const telemetry = startTelemetry('mailbox');
void import('./run.js').then(({ run }) => run(telemetry));
