/** The health, its history and the alerts: admin keys only (tenant contexts are refused). */
import { requireAdmin } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Alerts } from '../domain/alerts';
import type { Health } from '../domain/health';
import type { HealthHistory } from '../domain/health-history';

type HealthOps = 'admin.health.get' | 'admin.health.history' | 'admin.alert.list' | 'admin.alert.update';

export function healthHandlers(health: Health, history: HealthHistory, alerts: Alerts): Pick<RpcHandlers<'admin'>, HealthOps> {
  return {
    'admin.health.get': (_req, { auth }) => (requireAdmin(auth), health.check()),
    'admin.health.history': (req, { auth }) => (requireAdmin(auth), history.query(req)),
    'admin.alert.list': (_req, { auth }) => (requireAdmin(auth), alerts.list()),
    'admin.alert.update': (req, ctx) => (requireAdmin(ctx.auth), alerts.update(req, ctx)),
  };
}
