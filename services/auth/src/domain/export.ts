/**
 * The organization's rows auth holds, for its export (issue 28, part 4): API keys and SSO
 * configurations, one resource a page. Asked by the admin service alone (the bus
 * permissions). Members' names and emails come through auth.user.profiles.
 */
import { toExportPage, type ExportPage, type ExportResource, type ExportReader } from '@mailroom/contracts';
import type { AuthExportRepository } from '../repo/export.repository';


export class AuthExport {
  private readonly readers: Record<ExportResource<'auth'>, ExportReader>;

  constructor(repo: Pick<AuthExportRepository, keyof AuthExportRepository>) {
    this.readers = {
      api_keys: (q) => repo.apiKeys(q),
      sso_configurations: (q) => repo.ssoConfigurations(q),
    };
  }

  async page(req: { org_id: string; resource: ExportResource<'auth'>; limit: number; page_token?: string | undefined }): Promise<ExportPage> {
    const rows = await this.readers[req.resource]({ orgId: req.org_id, after: req.page_token, limit: req.limit + 1 });
    return toExportPage(rows, req.limit, (row) => ({ ...row }));
  }
}
