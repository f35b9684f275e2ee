/** Sends, their delivered recipients, suppressions, the send log and processed reports. Tenant reads filter on org and environment. */
import { sql, type Executor, type Insertable, type Kysely, type Selectable } from '@mailroom/db';
import type { OutboxRow } from '@mailroom/platform';
import type { SendDb, SendStatus, SendTable, SuppressionTable } from './tables';

export type SendRow = Selectable<SendTable>;
export type SuppressionRow = Selectable<SuppressionTable>;

/** A send whose hand-over starts: its row as first written. */
export type StartSending = Pick<SendTable, 'message_id' | 'org_id' | 'env_id' | 'inbox_id' | 'thread_id' | 'from_address' | 'to_addresses' | 'subject' | 'provider'>;

/** A provider's acceptance of a send, and its message.sent outbox row. */
export interface RecordSent {
  message_id: string;
  sent_at: Date;
  provider: string;
  provider_message_id: string;
  /** The hand-over span's W3C traceparent; none with telemetry off. */
  traceparent?: string | null;
  event: OutboxRow;
}

export class SendRepository {
  constructor(private readonly db: Kysely<SendDb>) {}

  find(messageId: string, ex: Executor<SendDb> = this.db): Promise<SendRow | undefined> {
    return ex.selectFrom('sends').selectAll().where('message_id', '=', messageId).executeTakeFirst();
  }

  async findByProviderId(provider: string, providerMessageId: string, ex: Executor<SendDb> = this.db): Promise<SendRow | undefined> {
    return ex.selectFrom('sends').selectAll().where('provider', '=', provider).where('provider_message_id', '=', providerMessageId).executeTakeFirst();
  }

  /**
   * Starts hand-overs, all in one statement: each send is inserted as `sending`, or an earlier
   * attempt's row (queued or sending) is moved to `sending`. Per send, false when its message
   * was handed over (or ended) before: it must not be handed over again.
   */
  async startSending(sends: StartSending[], ex: Executor<SendDb> = this.db): Promise<boolean[]> {
    const now = new Date();
    const { rows } = await sql<{ message_id: string }>`
      insert into sends (message_id, org_id, env_id, inbox_id, thread_id, from_address, to_addresses, subject, status, provider, created_at, updated_at)
      select x.message_id, x.org_id, x.env_id, x.inbox_id, x.thread_id, x.from_address, x.to_addresses, x.subject, 'sending', x.provider, ${now}, ${now}
      from jsonb_to_recordset(${JSON.stringify(sends)}::jsonb)
        as x(message_id text, org_id text, env_id text, inbox_id text, thread_id text, from_address text, to_addresses text[], subject text, provider text)
      on conflict (message_id) do update set status = 'sending', updated_at = excluded.updated_at
        where sends.status in ('queued', 'sending')
      returning message_id`.execute(ex);
    const started = new Set(rows.map((r) => r.message_id));
    return sends.map((s) => started.has(s.message_id));
  }

  /**
   * Records providers' acceptances and writes their message.sent outbox rows, all in one
   * statement (atomic, one round trip): status `sent` when that is forward (from one of
   * `from`), the provider's id and time kept, the attempt counted. The event is written even
   * when a report already moved the send further (a relay's success DSN can arrive before
   * this), so message.sent is never missing.
   */
  async recordSent(sent: RecordSent[], from: SendStatus[], ex: Executor<SendDb> = this.db): Promise<void> {
    await sql`
      with x as (
        select * from unnest(${sent.map((s) => s.message_id)}::text[], ${sent.map((s) => s.sent_at)}::timestamptz[],
                             ${sent.map((s) => s.provider)}::text[], ${sent.map((s) => s.provider_message_id)}::text[],
                             ${sent.map((s) => s.traceparent ?? null)}::text[])
          as x(message_id, sent_at, provider, provider_message_id, traceparent)
      ), sent as (
        update sends set
          status = case when status = any(${from}::text[]) then 'sent' else status end,
          sent_at = coalesce(sends.sent_at, x.sent_at),
          provider = x.provider,
          provider_message_id = coalesce(sends.provider_message_id, x.provider_message_id),
          traceparent = coalesce(sends.traceparent, x.traceparent),
          attempts = attempts + 1,
          last_error = null,
          updated_at = ${new Date()}
        -- = any: the rows by the primary key (joined on x alone, the plan can be a scan of sends).
        from x where sends.message_id = x.message_id and sends.message_id = any(${sent.map((s) => s.message_id)}::text[])
      )
      insert into outbox (id, subject, payload, traceparent)
      select * from unnest(${sent.map((s) => s.event.id)}::text[], ${sent.map((s) => s.event.subject)}::text[], ${sent.map((s) => s.event.payload)}::text[],
                           ${sent.map((s) => s.event.traceparent ?? null)}::text[])
      on conflict (id) do nothing`.execute(ex);
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

  /**
   * Records recipients of a send as delivered at `at`; returns those not recorded before, in
   * the order given (a recipient is announced delivered once, whichever report confirms it).
   */
  async recordDelivered(messageId: string, addresses: string[], at: Date, ex: Executor<SendDb> = this.db): Promise<string[]> {
    if (addresses.length === 0) return [];
    // In one order (two reports naming the same recipients at once take their row locks alike: no deadlock).
    const rows = await ex
      .insertInto('delivered_recipients')
      .values([...addresses].sort().map((address) => ({ message_id: messageId, address, delivered_at: at })))
      .onConflict((oc) => oc.columns(['message_id', 'address']).doNothing())
      .returning('address')
      .execute();
    const fresh = new Set(rows.map((r) => r.address));
    return addresses.filter((a) => fresh.has(a));
  }

  /** Counts a failed hand-over attempt; returns the attempts made so far (the provider's, not deliveries of the work item). */
  async noteAttempt(messageId: string, error: string | null, ex: Executor<SendDb> = this.db): Promise<number> {
    const row = await ex
      .updateTable('sends')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error, updated_at: new Date() }))
      .where('message_id', '=', messageId)
      .returning('attempts')
      .executeTakeFirst();
    return row?.attempts ?? 1;
  }

  // ---- suppression list

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

  /**
   * Holds the organization's send log until `trx` ends: the rate checks of one organization
   * run one at a time, in every instance, so each counts the sends admitted before it (two
   * admissions at once would each count the other's send as not yet there, and both pass the
   * last place under a limit). Taken before `admit`, whose statement then sees every send
   * committed before the lock was granted (READ COMMITTED takes a snapshot per statement).
   */
  async lockSendLog(orgId: string, trx: Executor<SendDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`mail-send.send_log:${orgId}`}, 0))`.execute(trx);
  }

  /**
   * The checks of a send that need the database, in one statement (one round trip): which
   * recipients are on the suppression list, how many sends the inbox and the organization
   * made since `since` (counted only when a limit is set), and, when nothing refuses the send,
   * the send logged at `at` for the next checks. A send checked again under its `message_id`
   * (retried after its answer was lost) is logged once, and not counted against itself; its
   * row moves to the retry's time, when it is really sent (a retry minutes later counts in
   * that minute, not in the first try's).
   */
  async admit(q: { org_id: string; env_id: string; inbox_id: string; addresses: string[]; message_id: string | null; since: Date; at: Date; perInbox: number; perOrg: number }, ex: Executor<SendDb> = this.db): Promise<{ blocked: { address: string; reason: string }[]; inbox: number; org: number; inbox_oldest: Date | null; org_oldest: Date | null }> {
    const counting = q.perInbox > 0 || q.perOrg > 0;
    const { rows } = await sql<{ blocked: { address: string; reason: string }[]; inbox: number; org: number; inbox_oldest: Date | null; org_oldest: Date | null }>`
      with blocked as (
        select address, reason from suppressions
        where org_id = ${q.org_id} and env_id = ${q.env_id} and address = any(${q.addresses.map((a) => a.toLowerCase())}::text[])
      ),
      counts as (
        select count(*) filter (where inbox_id = ${q.inbox_id})::int as inbox, count(*)::int as org,
               min(at) filter (where inbox_id = ${q.inbox_id}) as inbox_oldest, min(at) as org_oldest
        from send_log where org_id = ${q.org_id} and at > ${q.since} and ${counting}
          and (${q.message_id}::text is null or message_id is distinct from ${q.message_id}::text)
      ),
      logged as (
        insert into send_log (org_id, inbox_id, at, message_id)
        select ${q.org_id}, ${q.inbox_id}, ${q.at}, ${q.message_id}::text from counts
        where ${counting} and not exists (select 1 from blocked)
          and (${q.perInbox}::int = 0 or counts.inbox < ${q.perInbox}::int) and (${q.perOrg}::int = 0 or counts.org < ${q.perOrg}::int)
        on conflict (message_id) where message_id is not null do update set at = excluded.at
      )
      select coalesce((select json_agg(json_build_object('address', b.address, 'reason', b.reason) order by b.address) from blocked b), '[]'::json) as blocked, inbox, org,
             inbox_oldest, org_oldest
      from counts`.execute(ex);
    return rows[0] ?? { blocked: [], inbox: 0, org: 0, inbox_oldest: null, org_oldest: null };
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
