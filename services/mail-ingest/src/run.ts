import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { ingestService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(ingestService, process.env, telemetry);
}
