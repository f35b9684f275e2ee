/**
 * `node apps/all-in-one/dist/main.js [start|migrate]`: the whole platform in one process
 * (start, the default: migrates first unless MIGRATE_ON_START=false), or only the migrations.
 */
import { startTelemetry } from '@mailroom/platform';

const telemetry = startTelemetry('mailroom');

void import('./cli.js').then(({ cli }) => cli(process.argv.slice(2), telemetry));
