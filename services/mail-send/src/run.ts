import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { sendService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(sendService, process.env, telemetry);
}
