/** The admin service's operations: admin keys only (tenant contexts are refused), the gateway's verification. */
import { requireAdmin, requireService } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { AdminKeys } from '../domain/admin-keys';
import type { AuditLog } from '../domain/audit-log';
import type { Exports } from '../domain/exports';
import type { healthHandlers } from './health.handlers';

export function adminHandlers(keys: AdminKeys, audit: AuditLog, exports: Exports, health: ReturnType<typeof healthHandlers>): RpcHandlers<'admin'> {
  return {
    ...health,
    'admin.key.create': (req, ctx) => keys.create(requireAdmin(ctx.auth).admin_key_id, req, ctx),
    'admin.key.list': (req, { auth }) => (requireAdmin(auth), keys.list(req)),
    'admin.key.get': (req, { auth }) => (requireAdmin(auth), keys.get(req.id)),
    'admin.key.revoke': async (req, ctx) => {
      requireAdmin(ctx.auth);
      await keys.revoke(req.id, ctx);
      return {};
    },
    'admin.key.verify': (req, { auth }) => (requireService(auth), keys.verify(req.key)),
    'admin.audit.list': (req, { auth }) => (requireAdmin(auth), audit.list(req)),
    // Organization exports (issue 28, part 4).
    'admin.export.start': (req, ctx) => exports.start(requireAdmin(ctx.auth).admin_key_id, req.id, ctx),
    'admin.export.list': (req, { auth }) => (requireAdmin(auth), exports.list(req)),
    'admin.export.get': (req, { auth }) => (requireAdmin(auth), exports.get(req.id)),
    'admin.export.download': (req, ctx) => (requireAdmin(ctx.auth), exports.download(req.id, ctx)),
  };
}
