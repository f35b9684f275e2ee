/** The orgs service, over NATS, as the auth domain's OrgsDeparturePort (a person's deletion and purge). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { OrgsDeparturePort } from '../domain/ports';

export function orgsDepartureClient(rpc: RpcClient): OrgsDeparturePort {
  const parent = () => ({ requestId: newId('request') });
  return {
    owned: async (user_id) => (await rpc.asService('auth', 'orgs.membership.owned', { user_id }, parent())).data,
    purgeUser: (user_id) => rpc.asService('auth', 'orgs.membership.purgeUser', { user_id }, parent()),
  };
}
