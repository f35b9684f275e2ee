/**
 * The organization's own rows for its export (issue 28, part 4), one resource a page; the
 * admin service pages through EXPORT_RESOURCES.orgs. Asked by the admin service alone (the
 * bus permissions), for any organization: the caller names it.
 */
import { toExportPage, type ExportPage, type ExportResource, type ExportReader } from '@mailroom/contracts';
import type { OrgsExportRepository } from '../repo/export.repository';


export class OrgsExport {
  private readonly readers: Record<ExportResource<'orgs'>, ExportReader>;

  constructor(repo: Pick<OrgsExportRepository, keyof OrgsExportRepository>) {
    this.readers = {
      organization: (q) => repo.organization(q),
      environments: (q) => repo.environments(q),
      members: (q) => repo.members(q),
      invitations: (q) => repo.invitations(q),
      upgrade_requests: (q) => repo.upgradeRequests(q),
    };
  }

  async page(req: { org_id: string; resource: ExportResource<'orgs'>; limit: number; page_token?: string | undefined }): Promise<ExportPage> {
    const rows = await this.readers[req.resource]({ orgId: req.org_id, after: req.page_token, limit: req.limit + 1 });
    return toExportPage(rows, req.limit, (row) => ({ ...row }));
  }
}
