import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { gatewayService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(gatewayService, process.env, telemetry);
}
