/** The inboxes on a domain name, asked of mailbox over NATS (a service-only operation). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { InboxesOnDomain } from '../domain/ports';

export function inboxesClient(rpc: RpcClient): InboxesOnDomain {
  return { list: (org_id, env_id, domain) => rpc.asService('domains', 'mailbox.inbox.listOnDomain', { org_id, env_id, domain }, { requestId: newId('request') }) };
}
