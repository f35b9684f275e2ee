/** The services that own what an organization's usage counts, asked over NATS (service-only usage operations). */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { Period, UsageOwners } from '../domain/ports';

/**
 * How long an owner has to answer: below the gateway's RPC_TIMEOUT_MS (5 s by default), so
 * that a slow owner is named in the answer (503) rather than orgs timing out as a whole (504).
 */
export const USAGE_OWNER_TIMEOUT_MS = 3_000;

/** `rpc`: a client whose calls wait USAGE_OWNER_TIMEOUT_MS. */
export function usageOwners(rpc: RpcClient): UsageOwners {
  const call = () => ({ requestId: newId('request') });
  const within = (org_id: string, p: Period) => ({ org_id, start: p.start.toISOString(), end: p.end.toISOString() });
  return {
    mailbox: (orgId) => rpc.asService('orgs', 'mailbox.usage.count', { org_id: orgId }, call()),
    metrics: (orgId, period) => rpc.asService('orgs', 'metrics.usage.count', within(orgId, period), call()),
    webhooks: (orgId) => rpc.asService('orgs', 'webhooks.usage.count', { org_id: orgId }, call()),
    domains: (orgId) => rpc.asService('orgs', 'domains.usage.count', { org_id: orgId }, call()),
  };
}
