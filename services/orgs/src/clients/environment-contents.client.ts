/** The services that own an environment's resources, asked over NATS (service-only count operations). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { EnvironmentContents } from '../domain/ports';

export function environmentContents(rpc: RpcClient): EnvironmentContents {
  return {
    count: async (org_id, env_id) => {
      const scope = { org_id, env_id };
      const call = { requestId: newId('request') };
      const [inboxes, keys, endpoints, domains] = await Promise.all([
        rpc.asService('orgs', 'mailbox.inbox.countInEnvironment', scope, call),
        rpc.asService('orgs', 'auth.apikey.countInEnvironment', scope, call),
        rpc.asService('orgs', 'webhooks.endpoint.countInEnvironment', scope, call),
        rpc.asService('orgs', 'domains.domain.countInEnvironment', scope, call),
      ]);
      return { inboxes: inboxes.count, api_keys: keys.count, webhook_endpoints: endpoints.count, domains: domains.count };
    },
  };
}
