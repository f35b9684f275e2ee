/** Sends, suppressions, the send log and processed reports. Tenant reads filter on org and environment. */
import { sql, type Executor, type Insertable, type Kysely, type Selectable } from '@mailroom/db';
import type { SendDb, SendStatus, SendTable, SuppressionTable } from './tables';

export type SendRow = Selectable<SendTable>;
export type SuppressionRow = Selectable<SuppressionTable>;

export class SendRepository {
  constructor(private readonly db: Kysely<SendDb>) {}

  find(messageId: string, ex: Executor<SendDb> = this.db): Promise<SendRow | undefined> {
    return ex.selectFrom('sends').selectAll().where('message_id', '=', messageId).executeTakeFirst();
  }

  async findByProviderId(provider: string, providerMessageId: string, ex: Executor<SendDb> = this.db): Promise<SendRow | undefined> {
    return ex.selectFrom('sends').selectAll().where('provider', '=', provider).where('provider_message_id', '=', providerMessageId).executeTakeFirst();
  }

  async insertQueued(row: Insertable<SendTable>, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex.insertInto('sends').values(row).onConflict((oc) => oc.column('message_id').doNothing()).execute();
  }

  /** Moves a send to `to` when that is forward (see status.ts); returns whether it moved. */
  async advance(messageId: string, from: SendStatus[], set: Partial<Omit<SendRow, 'message_id'>> & { status: SendStatus }, ex: Executor<SendDb> = this.db): Promise<boolean> {
    const res = await ex
      .updateTable('sends')
      .set({ ...set, updated_at: new Date() })
      .where('message_id', '=', messageId)
      .where('status', 'in', from)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async noteAttempt(messageId: string, error: string | null, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex
      .updateTable('sends')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error, updated_at: new Date() }))
      .where('message_id', '=', messageId)
      .execute();
  }

  // ---- suppression list

  suppressed(orgId: string, envId: string, addresses: string[], ex: Executor<SendDb> = this.db): Promise<SuppressionRow[]> {
    if (!addresses.length) return Promise.resolve([]);
    return ex.selectFrom('suppressions').selectAll().where('org_id', '=', orgId).where('env_id', '=', envId).where('address', 'in', addresses.map((a) => a.toLowerCase())).execute();
  }

  async suppress(row: Insertable<SuppressionTable>, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex.insertInto('suppressions').values({ ...row, address: row.address.toLowerCase() }).onConflict((oc) => oc.columns(['org_id', 'env_id', 'address']).doNothing()).execute();
  }

  findSuppression(orgId: string, envId: string, address: string, ex: Executor<SendDb> = this.db): Promise<SuppressionRow | undefined> {
    return ex.selectFrom('suppressions').selectAll().where('org_id', '=', orgId).where('env_id', '=', envId).where('address', '=', address).executeTakeFirst();
  }

  async unsuppress(orgId: string, envId: string, address: string, ex: Executor<SendDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('suppressions').where('org_id', '=', orgId).where('env_id', '=', envId).where('address', '=', address).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** Newest first; the cursor is the last row's (created_at, address). */
  listSuppressions(orgId: string, envId: string, limit: number, after: { at: Date; address: string } | undefined, ex: Executor<SendDb> = this.db): Promise<SuppressionRow[]> {
    let q = ex.selectFrom('suppressions').selectAll().where('org_id', '=', orgId).where('env_id', '=', envId);
    if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('address', '>', after.address)])]));
    return q.orderBy('created_at', 'desc').orderBy('address', 'asc').limit(limit).execute();
  }

  // ---- rates

  async sentSince(orgId: string, inboxId: string, since: Date, ex: Executor<SendDb> = this.db): Promise<{ inbox: number; org: number }> {
    const { rows } = await sql<{ inbox: number; org: number }>`
      select count(*) filter (where inbox_id = ${inboxId})::int as inbox, count(*)::int as org
      from send_log where org_id = ${orgId} and at > ${since}`.execute(ex);
    return rows[0] ?? { inbox: 0, org: 0 };
  }

  async logSend(orgId: string, inboxId: string, at: Date, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex.insertInto('send_log').values({ org_id: orgId, inbox_id: inboxId, at }).execute();
  }

  async pruneSendLog(before: Date, ex: Executor<SendDb> = this.db): Promise<void> {
    await ex.deleteFrom('send_log').where('at', '<', before).execute();
  }

  // ---- reports

  /** Claims a report for processing; false when it was processed before. */
  async claimFeedback(rawId: string, messageId: string | null, ex: Executor<SendDb>): Promise<boolean> {
    const res = await ex.insertInto('feedback_processed').values({ raw_id: rawId, message_id: messageId }).onConflict((oc) => oc.column('raw_id').doNothing()).returning('raw_id').executeTakeFirst();
    return res !== undefined;
  }
}
