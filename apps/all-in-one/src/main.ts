/**
 * `node --require ./libs/platform/dist/telemetry-preload.js apps/all-in-one/dist/main.js [start|migrate]`:
 * the whole platform in one process (start, the default: migrates first unless
 * MIGRATE_ON_START=false), or only the migrations. The services' wiring is each one's main.ts.
 */
import { cli } from './cli';

void cli(process.argv.slice(2));
