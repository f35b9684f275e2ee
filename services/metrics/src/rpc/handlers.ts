/** The metrics service's operations. Tenancy comes from the caller's credential, never from the request. */
import { requireService, tenantScope } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Metrics } from '../domain/metrics';

export function metricsHandlers(metrics: Metrics): RpcHandlers<'metrics'> {
  return {
    'metrics.activity.get': (req, { auth }) => metrics.activity(tenantScope(auth), req),
    'metrics.summary.get': (req, { auth }) => metrics.summary(tenantScope(auth), req),
    'metrics.deliverability.get': (req, { auth }) => metrics.deliverability(tenantScope(auth), req),
    'metrics.platform.mail': async (req, { auth }) => {
      requireService(auth);
      return metrics.platformMail(req.since);
    },
    'metrics.usage.count': async (req, { auth }) => {
      requireService(auth);
      return metrics.usage(req.org_id, req);
    },
  };
}
