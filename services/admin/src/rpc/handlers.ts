/** The admin service's operations: admin keys only (tenant contexts are refused), the gateway's verification. */
import { requireAdmin, requireService } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { AdminKeys } from '../domain/admin-keys';
import type { Exports } from '../domain/exports';

export function adminHandlers(keys: AdminKeys, exports: Exports): RpcHandlers<'admin'> {
  return {
    'admin.key.create': (req, { auth }) => keys.create(requireAdmin(auth).admin_key_id, req),
    'admin.key.list': (req, { auth }) => (requireAdmin(auth), keys.list(req)),
    'admin.key.get': (req, { auth }) => (requireAdmin(auth), keys.get(req.id)),
    'admin.key.revoke': async (req, { auth }) => {
      requireAdmin(auth);
      await keys.revoke(req.id);
      return {};
    },
    'admin.key.verify': (req, { auth }) => (requireService(auth), keys.verify(req.key)),
    // Organization exports (issue 28, part 4).
    'admin.export.start': (req, { auth }) => exports.start(requireAdmin(auth).admin_key_id, req.id),
    'admin.export.list': (req, { auth }) => (requireAdmin(auth), exports.list(req)),
    'admin.export.get': (req, { auth }) => (requireAdmin(auth), exports.get(req.id)),
    'admin.export.download': (req, { auth }) => (requireAdmin(auth), exports.download(req.id)),
  };
}
