/** The webhooks service's operations: parsed by serveRpc, tenancy taken from the caller's credential. */
import { requireService, tenantScope } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { WebhooksExport } from '../domain/export';
import type { Endpoints } from '../domain/endpoints';

export function webhooksHandlers(endpoints: Endpoints, exportRows: WebhooksExport): RpcHandlers<'webhooks'> {
  return {
    'webhooks.endpoint.create': (req, { auth }) => endpoints.create(tenantScope(auth), req),
    'webhooks.endpoint.list': (req, { auth }) => endpoints.list(tenantScope(auth), req),
    'webhooks.endpoint.get': (req, { auth }) => endpoints.get(tenantScope(auth), req.id),
    'webhooks.endpoint.countInEnvironment': async (req, { auth }) => {
      requireService(auth);
      return endpoints.count(req);
    },
    'webhooks.endpoint.countAutoDisabled': async (req, { auth }) => {
      requireService(auth);
      return endpoints.countAutoDisabled(req.since);
    },
    'webhooks.usage.count': async (req, { auth }) => {
      requireService(auth);
      return endpoints.usage(req.org_id);
    },
    'webhooks.endpoint.update': (req, { auth }) => {
      const { id, ...changes } = req;
      return endpoints.update(tenantScope(auth), id, changes);
    },
    'webhooks.endpoint.delete': async (req, { auth }) => {
      await endpoints.delete(tenantScope(auth), req.id);
      return {};
    },
    'webhooks.endpoint.recover': (req, { auth }) => endpoints.recover(tenantScope(auth), req.id, req),
    'webhooks.recovery.get': (req, { auth }) => endpoints.recovery(tenantScope(auth), req.id, req.recovery_id),
    'webhooks.delivery.list': (req, { auth }) => endpoints.deliveries(tenantScope(auth), req.id, req),
    'webhooks.delivery.redeliver': (req, { auth }) => endpoints.redeliver(tenantScope(auth), req.id, req.delivery_id),
    // The organization's rows for its export (the admin service asks; services only).
    'webhooks.export.page': async (req, { auth }) => {
      requireService(auth);
      return exportRows.page(req);
    },
  };
}
