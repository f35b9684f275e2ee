/**
 * What an export reads from the other services over NATS, as the admin service: whether the
 * organization exists, each service's rows (`<service>.export.page`, service-only
 * operations only admin may call: contracts bus-access.ts), people's names and emails, and
 * the stored bytes of raw messages and attachments (read-only buckets).
 */
import {
  AppError,
  authExportPageRequest,
  domainsExportPageRequest,
  mailboxExportPageRequest,
  newId,
  orgsExportPageRequest,
  webhooksExportPageRequest,
  type ExportFile,
  type ExportService,
} from '@mailroom/contracts';
import type { ObjectStore, RpcClient } from '@mailroom/messaging';
import type { ExportSources, Organizations, StoredFiles } from '../domain/export-ports';

const SERVICE = 'admin';
const call = () => ({ requestId: newId('request') });

export function organizationsClient(rpc: RpcClient): Organizations {
  return {
    exists: async (orgId) => {
      try {
        await rpc.asService(SERVICE, 'orgs.organization.get', { org_id: orgId }, call());
        return true;
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return false;
        throw err;
      }
    },
  };
}

export function exportSourcesClient(rpc: RpcClient, pageSize: number): ExportSources {
  const page = (service: ExportService, resource: string, orgId: string, pageToken: string | undefined) => {
    // Parsed with the serving service's contract here: the resource must be one of its own.
    const req = { org_id: orgId, resource, limit: pageSize, ...(pageToken ? { page_token: pageToken } : {}) };
    switch (service) {
      case 'orgs':
        return rpc.asService(SERVICE, 'orgs.export.page', orgsExportPageRequest.parse(req), call());
      case 'auth':
        return rpc.asService(SERVICE, 'auth.export.page', authExportPageRequest.parse(req), call());
      case 'mailbox':
        return rpc.asService(SERVICE, 'mailbox.export.page', mailboxExportPageRequest.parse(req), call());
      case 'webhooks':
        return rpc.asService(SERVICE, 'webhooks.export.page', webhooksExportPageRequest.parse(req), call());
      case 'domains':
        return rpc.asService(SERVICE, 'domains.export.page', domainsExportPageRequest.parse(req), call());
    }
  };
  return {
    page,
    profiles: async (userIds) => (await rpc.asService(SERVICE, 'auth.user.profiles', { user_ids: userIds }, call())).data,
  };
}

export function storedFiles(buckets: Record<ExportFile['bucket'], ObjectStore>): StoredFiles {
  return {
    open: async (file) => (await buckets[file.bucket].get(file.object))?.data ?? null,
  };
}
