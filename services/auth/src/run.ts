import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { authService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(authService, process.env, telemetry);
}
