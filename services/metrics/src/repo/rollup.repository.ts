/** The rollups: one query per method; every tenant read filters on org_id and env_id. */
import { ID_PREFIXES, type Tenant } from '@mailroom/contracts';
import { sql, type Executor, type Kysely } from '@mailroom/db';
import type { InboxDomain, InboxRef } from '../domain/inbox-domains';
import { ALL_INBOXES, COUNTERS, type Counter } from '../domain/rollup';
import type { MetricsDb } from './tables';

/** The rollup's counter columns: the domain's counters, one column each. */
export const COUNT_COLUMNS = COUNTERS;
/** The prefix of inbox ids (contracts ids.ts): an inbox's rows, not the environment's nor a domain's. */
const INBOX_PREFIX = `${ID_PREFIXES.inbox}_`;
export type CountColumn = Counter;
export type CountsRow = Record<CountColumn, number>;

export interface CountsUpsert extends CountsRow {
  org_id: string;
  env_id: string;
  hour: Date;
  inbox_id: string;
  latency_sum_ms: number;
}

export interface LatencyUpsert {
  org_id: string;
  env_id: string;
  hour: Date;
  inbox_id: string;
  bucket: number;
  deliveries: number;
}

export interface Window {
  from: Date;
  to: Date;
  /** The rows read: an inbox's id, a domain's id (its inboxes), or ALL_INBOXES (domain/rollup.ts). */
  key: string;
  /** For the top inboxes: only those on this domain. */
  domainId?: string | undefined;
}

export class RollupRepository {
  constructor(private readonly db: Kysely<MetricsDb>) {}

  /** Records the event ids not seen before and answers those (the ones to count). */
  async markProcessed(ids: readonly string[], ex: Executor<MetricsDb> = this.db): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await ex
      .insertInto('processed_events')
      .values(ids.map((event_id) => ({ event_id })))
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .execute();
    return new Set(rows.map((r) => r.event_id));
  }

  /** Adds to the rows (created at zero when absent). Rows in key order: see domain aggregate. */
  async addCounts(rows: readonly CountsUpsert[], ex: Executor<MetricsDb> = this.db): Promise<void> {
    if (!rows.length) return;
    await ex
      .insertInto('hourly_counts')
      .values(rows.map((r) => ({ ...r })))
      .onConflict((oc) =>
        oc.columns(['org_id', 'env_id', 'hour', 'inbox_id']).doUpdateSet((eb) => ({
          ...Object.fromEntries(COUNT_COLUMNS.map((c) => [c, eb(`hourly_counts.${c}`, '+', eb.ref(`excluded.${c}`))])),
          latency_sum_ms: eb('hourly_counts.latency_sum_ms', '+', eb.ref('excluded.latency_sum_ms')),
        })),
      )
      .execute();
  }

  async addLatency(rows: readonly LatencyUpsert[], ex: Executor<MetricsDb> = this.db): Promise<void> {
    if (!rows.length) return;
    await ex
      .insertInto('hourly_latency')
      .values(rows.map((r) => ({ ...r })))
      .onConflict((oc) => oc.columns(['org_id', 'env_id', 'hour', 'inbox_id', 'bucket']).doUpdateSet((eb) => ({ deliveries: eb('hourly_latency.deliveries', '+', eb.ref('excluded.deliveries')) })))
      .execute();
  }

  /**
   * Of the environments named, those recorded as deleted (`env_id`s: ids are never reused). In
   * the counting's transaction: it keeps this table's lock until it commits, so a deletion
   * waits for it (libs/runtime deleted-environments.ts).
   */
  async deletedAmong(envIds: readonly string[], ex: Executor<MetricsDb> = this.db): Promise<Set<string>> {
    if (!envIds.length) return new Set();
    const rows = await ex.selectFrom('deleted_environments').select('env_id').where('env_id', 'in', [...envIds]).execute();
    return new Set(rows.map((r) => r.env_id));
  }

  /** Deletes the environment's rollups (counts and latencies, every hour and key) and its inboxes' domains; answers how many rollup rows went. */
  async deleteEnvironment(env: { org_id: string; env_id: string }, ex: Executor<MetricsDb> = this.db): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      with counts as (delete from hourly_counts where org_id = ${env.org_id} and env_id = ${env.env_id} returning 1),
           latency as (delete from hourly_latency where org_id = ${env.org_id} and env_id = ${env.env_id} returning 1),
           -- Runs though unread (PostgreSQL runs every data-modifying WITH to completion); not counted in the answer.
           domains as (delete from inbox_domains where org_id = ${env.org_id} and env_id = ${env.env_id})
      select (select count(*) from counts) + (select count(*) from latency) as n`.execute(ex);
    return Number(rows[0]?.n ?? 0);
  }

  /** Forgets the ids of events counted before `before` (the stream no longer holds them). */
  async pruneProcessed(before: Date): Promise<number> {
    const r = await this.db.deleteFrom('processed_events').where('processed_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** What is known of the inboxes' domains (those not known are left out). */
  async inboxDomains(inboxes: readonly InboxRef[], ex: Executor<MetricsDb> = this.db): Promise<InboxDomain[]> {
    if (!inboxes.length) return [];
    return ex
      .selectFrom('inbox_domains')
      .select(['org_id', 'env_id', 'inbox_id', 'domain_id'])
      .where((eb) => eb(eb.refTuple('org_id', 'env_id', 'inbox_id'), 'in', inboxes.map((i) => eb.tuple(i.org_id, i.env_id, i.inbox_id))))
      .execute();
  }

  /** Keeps the inboxes' domains; one already known stays as it was. */
  async rememberInboxDomains(rows: readonly InboxDomain[], ex: Executor<MetricsDb> = this.db): Promise<void> {
    if (!rows.length) return;
    await ex
      .insertInto('inbox_domains')
      .values(rows.map((r) => ({ ...r })))
      .onConflict((oc) => oc.columns(['org_id', 'env_id', 'inbox_id']).doNothing())
      .execute();
  }

  /** Whether the environment has any activity on the domain recorded (its row of all its inboxes). */
  async hasDomain(t: Tenant, domainId: string): Promise<boolean> {
    const row = await this.db.selectFrom('hourly_counts').select('inbox_id').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('inbox_id', '=', domainId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** The domain learned of an inbox of the environment: its id, null for none, undefined when not known. */
  async domainOfInbox(t: Tenant, inboxId: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('inbox_domains').select('domain_id').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('inbox_id', '=', inboxId).executeTakeFirst();
    return row?.domain_id;
  }

  /** Empties the rollups and the ids counted, for a replay (not the inboxes' domains: a replay files each event as before). */
  async truncate(ex: Executor<MetricsDb> = this.db): Promise<void> {
    await sql`truncate hourly_counts, hourly_latency, processed_events`.execute(ex);
  }

  /** Counts of each hour of the window that has any, summed over inboxes (or the one inbox). */
  async countsByHour(t: Tenant, w: Window): Promise<(CountsRow & { hour: Date })[]> {
    return this.db
      .selectFrom('hourly_counts')
      .select((eb) => ['hour', ...COUNT_COLUMNS.map((c) => sql<number>`sum(${eb.ref(c)})::bigint`.as(c))])
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('hour', '>=', w.from)
      .where('hour', '<', w.to)
      .where('inbox_id', '=', w.key)
      .groupBy('hour')
      .orderBy('hour')
      .execute();
  }

  /** Counts of the window, summed; zeros for none. */
  async totals(t: Tenant, w: Window): Promise<CountsRow> {
    return this.db
      .selectFrom('hourly_counts')
      .select((eb) => COUNT_COLUMNS.map((c) => sql<number>`coalesce(sum(${eb.ref(c)}), 0)::bigint`.as(c)))
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('hour', '>=', w.from)
      .where('hour', '<', w.to)
      .where('inbox_id', '=', w.key)
      .executeTakeFirstOrThrow();
  }

  /** Deliveries by latency bucket in the window. */
  async latency(t: Tenant, w: Window): Promise<{ bucket: number; deliveries: number }[]> {
    return this.db
      .selectFrom('hourly_latency')
      .select(['bucket', sql<number>`sum(deliveries)::bigint`.as('deliveries')])
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('hour', '>=', w.from)
      .where('hour', '<', w.to)
      .where('inbox_id', '=', w.key)
      .groupBy('bucket')
      .execute();
  }

  /** The inboxes with the most of `column` in the window (none with zero), with what they sent. */
  async topInboxes(t: Tenant, w: Window, column: CountColumn, limit: number): Promise<{ inbox_id: string; count: number; sent: number }[]> {
    return this.db
      .selectFrom('hourly_counts')
      .select((eb) => ['inbox_id', sql<number>`sum(${eb.ref(column)})::bigint`.as('count'), sql<number>`sum(sent)::bigint`.as('sent')])
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('hour', '>=', w.from)
      .where('hour', '<', w.to)
      .$if(w.key.startsWith(INBOX_PREFIX), (q) => q.where('inbox_id', '=', w.key))
      // Inboxes' rows only (not the environment's nor a domain's).
      .where(sql<boolean>`starts_with(inbox_id, ${INBOX_PREFIX})`)
      .$if(w.domainId !== undefined, (q) =>
        q.where('inbox_id', 'in', (eb) => eb.selectFrom('inbox_domains').select('inbox_id').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('domain_id', '=', w.domainId!)),
      )
      .groupBy('inbox_id')
      .having((eb) => eb(sql`sum(${eb.ref(column)})`, '>', 0))
      .orderBy('count', 'desc')
      .orderBy('inbox_id')
      .limit(limit)
      .execute();
  }

  /** Messages sent and received by an organization (every environment) in [from, to). */
  async organizationMessages(orgId: string, from: Date, to: Date): Promise<{ sent: number; received: number }> {
    return this.db
      .selectFrom('hourly_counts')
      .select([sql<number>`coalesce(sum(sent), 0)::bigint`.as('sent'), sql<number>`coalesce(sum(received), 0)::bigint`.as('received')])
      .where('org_id', '=', orgId)
      .where('inbox_id', '=', ALL_INBOXES)
      .where('hour', '>=', from)
      .where('hour', '<', to)
      .executeTakeFirstOrThrow();
  }

  /** Mail of every organization in the hours from `from` on (admin's alerts). */
  async platformMail(from: Date): Promise<{ sent: number; bounced_hard: number; bounced_soft: number; complained: number }> {
    return this.db
      .selectFrom('hourly_counts')
      .select([
        sql<number>`coalesce(sum(sent), 0)::bigint`.as('sent'),
        sql<number>`coalesce(sum(bounced_hard), 0)::bigint`.as('bounced_hard'),
        sql<number>`coalesce(sum(bounced_soft), 0)::bigint`.as('bounced_soft'),
        sql<number>`coalesce(sum(complained), 0)::bigint`.as('complained'),
      ])
      .where('inbox_id', '=', ALL_INBOXES)
      .where('hour', '>=', from)
      .executeTakeFirstOrThrow();
  }

  /** Whether the environment has any activity of the inbox recorded. */
  async hasInbox(t: Tenant, inboxId: string): Promise<boolean> {
    const row = await this.db.selectFrom('hourly_counts').select('inbox_id').where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('inbox_id', '=', inboxId).limit(1).executeTakeFirst();
    return row !== undefined;
  }
}
