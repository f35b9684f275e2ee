/** Inboxes asked of mailbox over NATS (service-only operations). */
import { AppError, newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { InboxesOnDomain } from '../domain/ports';

export function inboxesClient(rpc: RpcClient): InboxesOnDomain {
  return {
    list: (org_id, env_id, domain) => rpc.asService('domains', 'mailbox.inbox.listOnDomain', { org_id, env_id, domain }, { requestId: newId('request') }),
    async ofEnvironment(org_id, env_id, inbox_id) {
      try {
        return await rpc.asService('domains', 'mailbox.inbox.ofEnvironment', { org_id, env_id, inbox_id }, { requestId: newId('request') });
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      }
    },
  };
}
