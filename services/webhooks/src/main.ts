/** Entry of the webhooks service alone: `node services/webhooks/dist/main.js`. */
import { startTelemetry } from '@mailroom/platform';

// Tracing starts before the modules it instruments (http, pg) are loaded.
const telemetry = startTelemetry('webhooks');
void import('./run.js').then(({ run }) => run(telemetry));
