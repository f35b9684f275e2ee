/**
 * The organization's custom domains for its export (issue 28, part 4), a page at a time.
 * Asked by the admin service alone (the bus permissions).
 */
import { toExportPage, type ExportPage, type ExportResource } from '@mailroom/contracts';
import type { DomainsExportRepository } from '../repo/export.repository';

export class DomainsExport {
  constructor(private readonly repo: Pick<DomainsExportRepository, keyof DomainsExportRepository>) {}

  async page(req: { org_id: string; resource: ExportResource<'domains'>; limit: number; page_token?: string | undefined }): Promise<ExportPage> {
    const rows = await this.repo.domains({ orgId: req.org_id, after: req.page_token, limit: req.limit + 1 });
    return toExportPage(rows, req.limit, (row) => ({ ...row }));
  }
}
