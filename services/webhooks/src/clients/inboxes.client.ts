/** Inboxes asked of mailbox over NATS (a service-only operation): is this inbox in that environment? */
import { AppError, newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { InboxesPort } from '../domain/ports';

export function inboxesClient(rpc: RpcClient): InboxesPort {
  return {
    async inEnvironment(t, inbox_id) {
      try {
        await rpc.asService('webhooks', 'mailbox.inbox.ofEnvironment', { org_id: t.org_id, env_id: t.env_id, inbox_id }, { requestId: newId('request') });
        return true;
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return false;
        throw err;
      }
    },
  };
}
