import { runService } from '@mailroom/runtime';
import { gatewayService } from './service';

export function run(): Promise<void> {
  return runService(gatewayService, process.env);
}
