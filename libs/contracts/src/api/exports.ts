/**
 * Organization exports (issue 28, part 4): the operator's resource (`exp_`), and the paged,
 * service-only operation each service that holds tenant data answers with its own rows
 * (`<service>.export.page`). The admin service pages through every resource of
 * EXPORT_RESOURCES in order and writes one zip archive (README "Organization exports").
 */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

/** How long a finished export (its archive) is kept. */
export const EXPORT_RETENTION_DAYS = 7;

/** What each service exports, in the order the archive holds it; a file `<service>/<resource>.ndjson` each. */
export const EXPORT_RESOURCES = {
  orgs: ['organization', 'environments', 'members', 'invitations', 'upgrade_requests'],
  auth: ['api_keys', 'sso_configurations'],
  mailbox: ['inboxes', 'threads', 'messages', 'attachments'],
  webhooks: ['endpoints', 'deliveries'],
  domains: ['domains'],
} as const;
export type ExportService = keyof typeof EXPORT_RESOURCES;
export type ExportResource<S extends ExportService = ExportService> = (typeof EXPORT_RESOURCES)[S][number];

/** Rows of one export page at most (a page of messages holds no bodies: they are in the .eml files). */
export const EXPORT_PAGE_MAX = 200;

function exportPageRequest<S extends ExportService>(service: S) {
  return z.object({
    org_id: idSchema('organization'),
    resource: z.enum(EXPORT_RESOURCES[service]),
    limit: z.number().int().min(1).max(EXPORT_PAGE_MAX),
    /** The previous page's next_page_token; none for the first page. */
    page_token: z.string().min(1).max(512).optional(),
  });
}

export const orgsExportPageRequest = exportPageRequest('orgs');
export const authExportPageRequest = exportPageRequest('auth');
export const mailboxExportPageRequest = exportPageRequest('mailbox');
export const webhooksExportPageRequest = exportPageRequest('webhooks');
export const domainsExportPageRequest = exportPageRequest('domains');

/** A file of the archive a record points to (a raw message, an attachment): an object of a bucket. */
export const exportFile = z.object({
  /** Where it goes in the archive: lower-case ids and names, no `..`, no leading `/`. */
  path: z.string().regex(/^[a-z0-9_-]+(\/[a-z0-9_-]+)*\.[a-z0-9]+$/, 'must be a relative path of ids'),
  bucket: z.enum(['raw', 'received', 'sent', 'attachments']),
  object: z.string().min(1),
});
export type ExportFile = z.infer<typeof exportFile>;

export const exportPage = z.object({
  /** The rows as JSON objects, secrets left out (hashes, sealed keys, signing secrets). */
  data: z.array(z.record(z.string(), z.unknown())),
  files: z.array(exportFile),
  next_page_token: z.string().nullable(),
});
export type ExportPage = z.infer<typeof exportPage>;

export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const orgExport = z.object({
  id: idSchema('export'),
  org_id: idSchema('organization'),
  status: z.enum(EXPORT_STATUSES),
  /** The admin key that started it. */
  created_by: idSchema('adminKey').nullable(),
  created_at: isoTimestamp,
  started_at: isoTimestamp.nullable(),
  finished_at: isoTimestamp.nullable(),
  /** When the archive is deleted: 7 days after it finished; null until then. */
  expires_at: isoTimestamp.nullable(),
  /** The archive's size in bytes, once completed. */
  size_bytes: z.number().int().nonnegative().nullable(),
  progress: z.object({
    resources_done: z.number().int().nonnegative(),
    resources_total: z.number().int().nonnegative(),
    /** `<service>/<resource>` being written; null when none is. */
    current_resource: z.string().nullable(),
    records: z.number().int().nonnegative(),
    files: z.number().int().nonnegative(),
    /** Bytes of the archive written so far. */
    bytes: z.number().int().nonnegative(),
  }),
  /** Why it failed. */
  error: z.string().nullable(),
  /** Where the archive streams from (an admin key), once completed and until it expires. */
  download_url: z.string().nullable(),
});
export type OrgExport = z.infer<typeof orgExport>;

export const exportStartParams = z.object({ id: idSchema('organization') });
export const exportId = z.object({ id: idSchema('export') });
export const orgExportList = pageOf(orgExport);

/** What a service's export repository is asked: the organization's rows after `after`, in id order, `limit` of them. */
export interface ExportPageQuery {
  orgId: string;
  after: string | undefined;
  limit: number;
}

/** How a service reads one resource of its export (its rows; the domain turns them into records). */
export type ExportReader = (q: ExportPageQuery) => Promise<{ id: string }[]>;

/**
 * One export page from rows read `limit + 1` at a time in id order: the next token is the
 * last id shown, given only when a further row exists.
 */
export function toExportPage<R extends { id: string }>(rows: readonly R[], limit: number, record: (row: R) => Record<string, unknown>, files?: (row: R) => ExportFile[]): ExportPage {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map(record), files: files ? page.flatMap(files) : [], next_page_token: rows.length > limit && last ? last.id : null };
}
