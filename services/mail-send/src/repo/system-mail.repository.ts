/** Queries of the record of mail from the platform itself. */
import { sql, type Kysely } from '@mailroom/db';
import type { SystemMailLog } from '../domain/system-mail/system-mailer';
import type { SendDb } from './tables';

export class SystemMailRepository implements SystemMailLog {
  constructor(private readonly db: Kysely<SendDb>) {}

  /** Makes the row, or counts one more attempt on a row still sending; the row as it is after. */
  async claim(row: { id: string; template: string; to_address: string; now: Date }): Promise<{ status: 'sending' | 'sent' | 'failed'; attempts: number }> {
    return this.db
      .insertInto('system_mails')
      .values({ id: row.id, template: row.template, to_address: row.to_address, status: 'sending', created_at: row.now })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ attempts: sql<number>`case when system_mails.status = 'sending' then system_mails.attempts + 1 else system_mails.attempts end` }),
      )
      .returning(['status', 'attempts'])
      .executeTakeFirstOrThrow();
  }

  async finish(id: string, status: 'sent' | 'failed', at: Date, error: string | null): Promise<void> {
    await this.db.updateTable('system_mails').set({ status, finished_at: at, last_error: error }).where('id', '=', id).where('status', '=', 'sending').execute();
  }
}
