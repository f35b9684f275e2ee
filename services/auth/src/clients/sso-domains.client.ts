/** Verified domains, asked of the domains service (domains.domain.verifiedNames, services only): SSO admits addresses of an organization's verified domains only. */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { SsoDomainsPort } from '../domain/sso-ports';

export function ssoDomainsClient(rpc: RpcClient): SsoDomainsPort {
  return {
    verified: async (names, orgId) => (await rpc.asService('auth', 'domains.domain.verifiedNames', { names: [...names], ...(orgId ? { org_id: orgId } : {}) }, { requestId: newId('request') })).data,
  };
}
