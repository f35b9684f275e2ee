import type { Telemetry } from '@mailroom/platform';
import { runService } from '@mailroom/runtime';
import { mailboxService } from './service';

export function run(telemetry: Telemetry): Promise<void> {
  return runService(mailboxService, process.env, telemetry);
}
