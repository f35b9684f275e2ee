/** The domains service's operations. Tenancy comes from the caller's credential, never from the request. */
import { requireService, tenantScope } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { DomainsExport } from '../domain/export';
import type { Domains } from '../domain/domains';
import { zoneFileOf } from '../domain/zone-file';

export function domainsHandlers(domains: Domains, exportRows: DomainsExport): RpcHandlers<'domains'> {
  return {
    'domains.domain.create': (req, { auth }) => domains.create(tenantScope(auth), req),
    'domains.domain.list': (req, { auth }) => domains.list(tenantScope(auth), req),
    'domains.domain.get': (req, { auth }) => domains.get(tenantScope(auth), req.id),
    'domains.domain.delete': async (req, ctx) => {
      await domains.delete(tenantScope(ctx.auth), req.id, ctx);
      return {};
    },
    'domains.domain.verify': (req, { auth }) => domains.verify(tenantScope(auth), req.id),
    'domains.domain.zoneFile': async (req, { auth }) => ({ content_type: 'text/plain; charset=utf-8' as const, text: zoneFileOf(await domains.get(tenantScope(auth), req.id)) }),
    'domains.domain.verifiedNames': async (req, { auth }) => {
      requireService(auth);
      return domains.verifiedNames(req.names, req.org_id);
    },
    'domains.domain.countInEnvironment': async (req, { auth }) => {
      requireService(auth);
      return domains.countInEnvironment(req);
    },
    'domains.domain.setCatchAll': (req, { auth }) => domains.setCatchAll(tenantScope(auth), req.id, req.inbox_id),
    'domains.domain.route': async (req, { auth }) => {
      requireService(auth);
      return domains.route(req.domain_name);
    },
    'domains.domain.status': async (req, { auth }) => {
      requireService(auth);
      return domains.status(req, req.domain_name);
    },
    'domains.domain.countFailed': async (req, { auth }) => {
      requireService(auth);
      return domains.countFailed(req.since);
    },
    'domains.usage.count': async (req, { auth }) => {
      requireService(auth);
      return domains.usage(req.org_id);
    },
    // Sending with a custom domain's key (issue 25, part 7).
    'domains.domain.rotateDkim': (req, { auth }) => domains.rotateDkim(tenantScope(auth), req.id),
    'domains.domain.signingKey': async (req, { auth }) => {
      requireService(auth);
      return domains.signingKey(req);
    },
    // The organization's rows for its export (the admin service asks; services only).
    'domains.export.page': async (req, { auth }) => {
      requireService(auth);
      return exportRows.page(req);
    },
  };
}
