/**
 * The organization's webhook endpoints and deliveries for its export (issue 28, part 4), one
 * resource a page. Asked by the admin service alone (the bus permissions).
 */
import { toExportPage, type ExportPage, type ExportResource, type ExportReader } from '@mailroom/contracts';
import type { WebhooksExportRepository } from '../repo/export.repository';


export class WebhooksExport {
  private readonly readers: Record<ExportResource<'webhooks'>, ExportReader>;

  constructor(repo: Pick<WebhooksExportRepository, keyof WebhooksExportRepository>) {
    this.readers = { endpoints: (q) => repo.endpoints(q), deliveries: (q) => repo.deliveries(q) };
  }

  async page(req: { org_id: string; resource: ExportResource<'webhooks'>; limit: number; page_token?: string | undefined }): Promise<ExportPage> {
    const rows = await this.readers[req.resource]({ orgId: req.org_id, after: req.page_token, limit: req.limit + 1 });
    return toExportPage(rows, req.limit, (row) => ({ ...row }));
  }
}
