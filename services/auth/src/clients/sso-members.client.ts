/** Just-in-time members of single sign-on: orgs makes the membership (orgs.membership.addForSso, services only). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { SsoMembersPort } from '../domain/sso-sign-in';

export function ssoMembersClient(rpc: RpcClient): SsoMembersPort {
  return {
    join: (org_id, user_id, role) => rpc.asService('auth', 'orgs.membership.addForSso', { org_id, user_id, role }, { requestId: newId('request') }),
  };
}
