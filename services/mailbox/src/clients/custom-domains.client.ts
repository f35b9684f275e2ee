/** Custom domains of an environment by name, asked of domains over NATS (a service-only operation). */
import { AppError, newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { CustomDomainsPort } from '../domain/ports';

export function customDomainsClient(rpc: RpcClient): CustomDomainsPort {
  return {
    async statusOf(t, domain_name) {
      try {
        return await rpc.asService('mailbox', 'domains.domain.status', { org_id: t.org_id, env_id: t.env_id, domain_name }, { requestId: newId('request') });
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      }
    },
  };
}
