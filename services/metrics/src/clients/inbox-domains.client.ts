/**
 * The custom domain of an inbox, asked of its owners over NATS (service-only operations, as
 * the metrics identity): mailbox says the inbox's domain name in the event's organization and
 * environment, domains says that environment's domain of the name. Either's 404 is an answer
 * (no custom domain); anything else (no responders, a timeout) is thrown.
 */
import { AppError, newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { InboxDomainsPort } from '../domain/inbox-domains';

async function orNotFound<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return null;
    throw err;
  }
}

export function inboxDomainsClient(rpc: RpcClient): InboxDomainsPort {
  return {
    async domainOf({ org_id, env_id, inbox_id }) {
      const parent = { requestId: newId('request') };
      const inbox = await orNotFound(rpc.asService('metrics', 'mailbox.inbox.ofEnvironment', { org_id, env_id, inbox_id }, parent));
      if (!inbox) return null;
      const domain = await orNotFound(rpc.asService('metrics', 'domains.domain.status', { org_id, env_id, domain_name: inbox.domain }, parent));
      return domain?.domain_id ?? null;
    },
  };
}
