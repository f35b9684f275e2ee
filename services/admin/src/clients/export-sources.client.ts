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

/** How long a file's read may wait for its next chunk before the export fails (a stalled store never holds a job for ever). */
export const FILE_IDLE_MS = 30_000;

export function storedFiles(buckets: Record<ExportFile['bucket'], ObjectStore>, idleMs = FILE_IDLE_MS): StoredFiles {
  return {
    open: async (file) => {
      const object = await buckets[file.bucket].get(file.object);
      return object ? withIdleDeadline(object.data, idleMs, file.path) : null;
    },
  };
}

async function* withIdleDeadline(stream: ReadableStream<Uint8Array>, idleMs: number, path: string): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${path}: the object store sent nothing for ${idleMs} ms`)), idleMs)));
      const next = await Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer));
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
}
