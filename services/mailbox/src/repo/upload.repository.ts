/** Uploads to send; every read filters on org_id and env_id. */
import type { Tenant } from '@mailroom/contracts';
import type { Kysely } from '@mailroom/db';
import type { MailboxDb } from './tables';

export interface UploadRow {
  id: string;
  org_id: string;
  env_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: Date;
  expires_at: Date;
}

export class UploadRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  /** False when the id is taken (an object recorded twice). */
  async insert(row: UploadRow): Promise<boolean> {
    const inserted = await this.db.insertInto('uploads').values(row).onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
    return inserted !== undefined;
  }

  /** The tenant's uploads of these ids (expired ones too: the domain tells them apart). */
  async find(t: Tenant, ids: string[]): Promise<UploadRow[]> {
    if (!ids.length) return [];
    const rows = await this.db.selectFrom('uploads').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('id', 'in', ids).execute();
    return rows.map((r) => ({ ...r, size: Number(r.size) }));
  }

  /** Deletes rows that expired before `before`; how many. */
  async deleteExpired(before: Date): Promise<number> {
    const result = await this.db.deleteFrom('uploads').where('expires_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
