/** What the alerts measure, asked over NATS as the admin service (service-only operations of metrics, webhooks, domains). */
import { newId } from '@mailroom/contracts';
import { RpcClient, type Bus } from '@mailroom/messaging';
import type { PlatformSignals } from '../domain/ports';

export function platformSignals(bus: Bus): PlatformSignals {
  const rpc = new RpcClient(bus);
  const ask = () => ({ requestId: newId('request') });
  return {
    mail: (since) => rpc.asService('admin', 'metrics.platform.mail', { since: since.toISOString() }, ask()),
    disabledEndpoints: async (since) => (await rpc.asService('admin', 'webhooks.endpoint.countAutoDisabled', { since: since.toISOString() }, ask())).count,
    failedDomains: async (since) => (await rpc.asService('admin', 'domains.domain.countFailed', { since: since.toISOString() }, ask())).count,
  };
}
