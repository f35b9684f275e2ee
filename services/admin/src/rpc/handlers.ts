/** The admin service's operations: admin keys only (tenant contexts are refused), the gateway's verification. */
import { requireAdmin, requireService } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { AdminKeys } from '../domain/admin-keys';
import type { healthHandlers } from './health.handlers';

export function adminHandlers(keys: AdminKeys, health: ReturnType<typeof healthHandlers>): RpcHandlers<'admin'> {
  return {
    ...health,
    'admin.key.create': (req, { auth }) => keys.create(requireAdmin(auth).admin_key_id, req),
    'admin.key.list': (req, { auth }) => (requireAdmin(auth), keys.list(req)),
    'admin.key.get': (req, { auth }) => (requireAdmin(auth), keys.get(req.id)),
    'admin.key.revoke': async (req, { auth }) => {
      requireAdmin(auth);
      await keys.revoke(req.id);
      return {};
    },
    'admin.key.verify': (req, { auth }) => (requireService(auth), keys.verify(req.key)),
  };
}
