/** Queries of the record of mail from the platform itself, and of the addresses it no longer goes to. */
import { sql, type Executor, type Kysely } from '@mailroom/db';
import type { SystemFeedbackStore, SystemMailRecord } from '../domain/system-mail/system-feedback';
import type { SystemMailLog } from '../domain/system-mail/system-mailer';
import type { SendDb, SystemSuppressionReason } from './tables';

export class SystemMailRepository implements SystemMailLog, SystemFeedbackStore {
  constructor(private readonly db: Kysely<SendDb>) {}

  /** Makes the row, or counts one more attempt on a row still sending; the row as it is after. */
  async claim(row: { id: string; template: string; to_address: string; now: Date }): Promise<{ status: SystemMailRecord['status']; attempts: number }> {
    return this.db
      .insertInto('system_mails')
      .values({ id: row.id, template: row.template, to_address: row.to_address, status: 'sending', created_at: row.now })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ attempts: sql<number>`case when system_mails.status = 'sending' then system_mails.attempts + 1 else system_mails.attempts end` }),
      )
      .returning(['status', 'attempts'])
      .executeTakeFirstOrThrow();
  }

  async finish(id: string, status: 'sent' | 'failed' | 'suppressed', at: Date, error: string | null): Promise<void> {
    await this.db.updateTable('system_mails').set({ status, finished_at: at, last_error: error }).where('id', '=', id).where('status', '=', 'sending').execute();
  }

  async isSuppressed(address: string): Promise<boolean> {
    const row = await this.db.selectFrom('system_suppressions').select('address').where('address', '=', address.toLowerCase()).executeTakeFirst();
    return row !== undefined;
  }

  find(id: string): Promise<SystemMailRecord | undefined> {
    return this.db.selectFrom('system_mails').select(['id', 'to_address', 'status']).where('id', '=', id).executeTakeFirst();
  }

  async claimReport(reportId: string, mailId: string, ex: Executor<SendDb> = this.db): Promise<boolean> {
    const res = await ex.insertInto('feedback_processed').values({ raw_id: reportId, message_id: mailId }).onConflict((oc) => oc.column('raw_id').doNothing()).returning('raw_id').executeTakeFirst();
    return res !== undefined;
  }

  async mark(id: string, status: 'bounced' | 'complained', ex: Executor<SendDb> = this.db): Promise<void> {
    await ex.updateTable('system_mails').set({ status }).where('id', '=', id).where('status', 'in', ['sending', 'sent', 'bounced']).execute();
  }

  async suppress(row: { address: string; reason: SystemSuppressionReason; system_mail_id: string; now: Date }, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex
      .insertInto('system_suppressions')
      .values({ address: row.address, reason: row.reason, system_mail_id: row.system_mail_id, created_at: row.now })
      .onConflict((oc) => oc.column('address').doNothing())
      .execute();
  }
}
