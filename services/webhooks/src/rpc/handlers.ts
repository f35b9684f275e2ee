/** The webhooks service's operations: parsed by serveRpc, tenancy taken from the caller's credential. */
import { AppError, isTenant, type AuthContext } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Endpoints } from '../domain/endpoints';
import type { Tenant } from '../repo/endpoint.repository';

/** API keys and user tokens both act in one org and environment; nothing else manages webhooks. */
function tenantOf(auth: AuthContext): Tenant {
  if (!isTenant(auth)) throw new AppError('unauthorized', 'this operation needs an API key or a user access token');
  return { org_id: auth.org_id, env_id: auth.env_id };
}

export function webhooksHandlers(endpoints: Endpoints): RpcHandlers<'webhooks'> {
  return {
    'webhooks.endpoint.create': (req, { auth }) => endpoints.create(tenantOf(auth), req),
    'webhooks.endpoint.list': (req, { auth }) => endpoints.list(tenantOf(auth), req),
    'webhooks.endpoint.get': (req, { auth }) => endpoints.get(tenantOf(auth), req.id),
    'webhooks.endpoint.update': (req, { auth }) => {
      const { id, ...changes } = req;
      return endpoints.update(tenantOf(auth), id, changes);
    },
    'webhooks.endpoint.delete': async (req, { auth }) => {
      await endpoints.delete(tenantOf(auth), req.id);
      return {};
    },
    'webhooks.endpoint.recover': (req, { auth }) => endpoints.recover(tenantOf(auth), req.id, req),
    'webhooks.recovery.get': (req, { auth }) => endpoints.recovery(tenantOf(auth), req.id, req.recovery_id),
    'webhooks.delivery.list': (req, { auth }) => endpoints.deliveries(tenantOf(auth), req.id, req),
    'webhooks.delivery.redeliver': (req, { auth }) => endpoints.redeliver(tenantOf(auth), req.id, req.delivery_id),
  };
}
