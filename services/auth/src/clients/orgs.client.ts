/** The orgs service, over NATS, as the auth domain's OrgsPort. */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { OrgsPort } from '../domain/ports';

export function orgsClient(rpc: RpcClient): OrgsPort {
  const parent = () => ({ requestId: newId('request') });
  return {
    createForOwner: (owner_user_id, name) => rpc.asService('auth', 'orgs.organization.createForOwner', { owner_user_id, name }, parent()),
    memberships: async (user_id) => (await rpc.asService('auth', 'orgs.membership.listForUser', { user_id }, parent())).data,
    organization: (org_id) => rpc.asService('auth', 'orgs.organization.get', { org_id }, parent()),
    environment: (org_id, env_id) => rpc.asService('auth', 'orgs.environment.get', { org_id, env_id }, parent()),
  };
}
