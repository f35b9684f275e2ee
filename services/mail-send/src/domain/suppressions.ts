/** The suppression list as a tenant manages it. */
import { z } from 'zod';
import { AppError, encodePageToken, pageCursor, type Tenant } from '@mailroom/contracts';
import type { SendRepository, SuppressionRow } from '../repo/send.repository';

const cursor = z.object({ at: z.iso.datetime({ precision: 3 }), address: z.string() });

function present(row: SuppressionRow) {
  return { address: row.address, reason: row.reason, message_id: row.message_id, created_at: row.created_at.toISOString() };
}

export class Suppressions {
  constructor(private readonly repo: SendRepository) {}

  async list(t: Tenant, q: { limit: number; page_token?: string | undefined }) {
    const c = pageCursor(q.page_token, cursor);
    const after = c && { at: new Date(c.at), address: c.address };
    const rows = await this.repo.listSuppressions(t.org_id, t.env_id, q.limit + 1, after);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(present), next_page_token: rows.length > q.limit && last ? encodePageToken({ at: last.created_at.toISOString(), address: last.address }) : null };
  }

  async add(t: Tenant, address: string) {
    await this.repo.suppress({ org_id: t.org_id, env_id: t.env_id, address, reason: 'manual', message_id: null });
    const row = await this.repo.findSuppression(t.org_id, t.env_id, address);
    if (!row) throw new AppError('internal_error', 'suppression vanished');
    return present(row);
  }

  async remove(t: Tenant, address: string): Promise<void> {
    if (!(await this.repo.unsuppress(t.org_id, t.env_id, address))) throw AppError.notFound('suppression');
  }
}
