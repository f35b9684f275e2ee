/** The organization's plan limits, asked of orgs over NATS (a service-only operation). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { PlanLimitsPort } from '../domain/ports';

export function planLimitsClient(rpc: RpcClient): PlanLimitsPort {
  return { of: (org_id) => rpc.asService('domains', 'orgs.organization.limits', { org_id }, { requestId: newId('request') }) };
}
