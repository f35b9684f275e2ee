import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { orgsService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(orgsService, process.env, telemetry);
}
