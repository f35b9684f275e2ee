import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { webhooksService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(webhooksService, process.env, telemetry);
}
