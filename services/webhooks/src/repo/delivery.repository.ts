/**
 * Deliveries (jobs) and their attempts: fan-out of an event, claiming due work with
 * `for update skip locked` under a worker's lease, recording finished attempts in batches,
 * and the tenant-scoped reads of the delivery records.
 *
 * `jobs` is the live queue: a delivery is a row while it still has an attempt to make and
 * is deleted when it is finished (delivered, failed for good, cancelled); what happened to
 * it is its rows in `attempts`.
 */
import type { Tenant } from '@mailroom/contracts';
import { sql, withTransaction, type Executor, type Kysely, type RawBuilder, type Selectable } from '@mailroom/db';
import { afterAttempts } from '../domain/endpoint-health';
import type { AttemptTable, JobOrigin, WebhooksDb } from './tables';

export type AttemptRow = Selectable<AttemptTable> & { event_type: string };

export interface StoredEvent {
  id: string;
  org_id: string;
  env_id: string;
  type: string;
  body: Buffer;
  occurred_at: Date;
  /** The inbox it is about (not stored: it routes the fan-out), null for none. */
  inbox_id: string | null;
  /** The W3C traceparent its delivery attempts are children of; null (or none) with telemetry off. */
  traceparent?: string | null;
}

export interface ClaimedJob {
  id: number;
  endpoint_id: string;
  event_id: string;
  origin: JobOrigin;
  attempts: number;
  max_attempts: number;
  body: Buffer;
  url: string;
  secret_sealed: Buffer;
  /** Its event's traceparent: the attempt's span is its child (none: a trace of its own). */
  traceparent?: string | null;
}

export interface FinishedAttempt {
  attemptId: string;
  job: ClaimedJob;
  attempt: number;
  trigger: 'scheduled' | 'manual';
  ok: boolean;
  httpStatus: number;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
  at: Date;
  /** When the next attempt is due, if the retry policy grants one. */
  retryAt: Date | null;
}

/** An endpoint of a recorded batch, as it is after the record (endpoints deleted meanwhile are missing). */
export interface RecordedEndpoint {
  id: string;
  url: string;
  disabled: boolean;
  /** Disabled by this record (its failures reached the threshold). */
  disabledNow: boolean;
  consecutiveFailures: number;
}

/** New deliveries created leased to `owner`, except those to the endpoints of `pendingFor`. */
export interface NewWorkLease {
  owner: string;
  pendingFor: string[];
  /** When the worker gave the lease (its own monotonic ms): the fan-out reads endpoints after it. */
  issuedAt?: number;
}

export interface ClaimRequest {
  owner: string;
  now: Date;
  /** Endpoints to claim for, with how many deliveries each at most. */
  endpoints: { id: string; room: number }[];
  /** Also claim for other endpoints with due deliveries: `endpoints` of them at most, `room` each, none of `exclude`. */
  discover?: { endpoints: number; room: number; exclude: string[] } | undefined;
}

/** From this many endpoints named to a fan-out, the list is matched through a hash rather than element by element. */
const PENDING_FOR_HASHED = 64;

export class DeliveryRepository {
  constructor(private readonly db: Kysely<WebhooksDb>) {}

  /**
   * Stores each event and one delivery per matching enabled endpoint of its org and
   * environment, in one statement for the whole batch. An event is fanned out once: a
   * repeated one (JetStream redelivers what was not acked) finds its row marked and adds
   * nothing. With `lease`, the new deliveries are created already claimed by that worker (it
   * will attempt them at once, sparing a claim round trip) and returned; without, they are
   * created pending and only counted. `lease.pendingFor` lists endpoints whose new
   * deliveries are created pending even so (the worker has enough of theirs to do).
   */
  async fanOut(
    events: StoredEvent[],
    opts: { maxAttempts: number; now: Date; lease?: NewWorkLease | undefined },
    ex: Executor<WebhooksDb> = this.db,
  ): Promise<{ created: number; claimed: ClaimedJob[]; pendingEndpoints: string[] }> {
    if (events.length === 0) return { created: 0, claimed: [], pendingEndpoints: [] };
    const { now, lease } = opts;
    // A long list is hashed once (the plans are generic: = any() would compare each target row with every id).
    const leased = !lease
      ? sql`false`
      : lease.pendingFor.length > PENDING_FOR_HASHED
        ? sql`not (e.id in (select unnest(${lease.pendingFor}::text[])))`
        : sql`not (e.id = any(${lease.pendingFor}::text[]))`;
    const { rows } = await sql<Pick<ClaimedJob, 'id' | 'endpoint_id' | 'event_id' | 'url' | 'secret_sealed'> & { leased: boolean }>`
      with ev as (
        -- distinct: the same event twice in one batch is one event (and one row to upsert).
        select distinct on (id) * from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.org_id)}::text[], ${events.map((e) => e.env_id)}::text[],
                             ${events.map((e) => e.type)}::text[], ${events.map((e) => e.body)}::bytea[], ${events.map((e) => e.occurred_at)}::timestamptz[],
                             ${events.map((e) => e.inbox_id)}::text[], ${events.map((e) => e.traceparent ?? null)}::text[])
          as ev(id, org_id, env_id, type, body, occurred_at, inbox_id, traceparent)
      ), targets as (
        -- The subscription rule of domain/subscription.ts (an event of no inbox matches no inbox list).
        select ev.id as event_id, e.id as endpoint_id, ${leased} as leased from ev
        join endpoints e on e.org_id = ev.org_id and e.env_id = ev.env_id and not e.disabled
          and (e.event_types is null or ev.type = any(e.event_types))
          and (e.inbox_ids is null or ev.inbox_id = any(e.inbox_ids))
      ), fresh as (
        -- Returns the events fanned out now: new ones, and those only recovery had stored
        -- (their attempts now children of this handling, when it is traced).
        insert into events (id, org_id, env_id, type, body, occurred_at, fanned_out, traceparent)
        select ev.id, ev.org_id, ev.env_id, ev.type, ev.body, ev.occurred_at, true, ev.traceparent from ev
        where exists (select 1 from targets t where t.event_id = ev.id)
        on conflict (id) do update set fanned_out = true, traceparent = coalesce(excluded.traceparent, events.traceparent) where not events.fanned_out
        returning id, xmax = 0 as is_new
      ), inserted as (
        insert into jobs (endpoint_id, event_id, origin, state, max_attempts, next_attempt_at, lock_owner, created_at, updated_at)
        select t.endpoint_id, t.event_id, 'event', case when t.leased then 'in_flight' else 'pending' end, ${opts.maxAttempts}, ${now},
               case when t.leased then ${lease?.owner ?? null}::text end, ${now}, ${now}
        from targets t
        -- in (...), hashed: a join of two CTEs is planned as a nested loop (targets x events compared).
        where t.event_id in (select id from fresh where is_new)
           -- An event recovery stored first: not again to an endpoint recovery queued it for or that has it already.
           or (t.event_id in (select id from fresh where not is_new)
               and not exists (select 1 from jobs j where j.endpoint_id = t.endpoint_id and j.event_id = t.event_id)
               and not exists (select 1 from attempts a where a.endpoint_id = t.endpoint_id and a.event_id = t.event_id and a.status = 'delivered'))
        returning id, endpoint_id, event_id, state = 'in_flight' as leased
      )
      select i.id, i.endpoint_id, i.event_id, i.leased, p.url, p.secret_sealed
      from inserted i
      join endpoints p on p.id = i.endpoint_id`.execute(ex);
    const pendingEndpoints = [...new Set(rows.filter((r) => !r.leased).map((r) => r.endpoint_id))];
    if (!lease) return { created: rows.length, claimed: [], pendingEndpoints };
    // The event is the one just written: not read back from the database.
    const byId = new Map(events.map((e) => [e.id, e]));
    const claimed: ClaimedJob[] = [];
    for (const { leased, ...r } of rows) {
      if (!leased) continue;
      const e = byId.get(r.event_id)!;
      claimed.push({ ...r, origin: 'event', attempts: 0, max_attempts: opts.maxAttempts, body: e.body, traceparent: e.traceparent ?? null });
    }
    return { created: rows.length, claimed, pendingEndpoints };
  }

  /**
   * Claims due deliveries for `owner`, oldest due first within each endpoint: up to `room`
   * of each endpoint in `endpoints`, and with `discover`, up to `discover.room` of each of
   * the `discover.endpoints` other endpoints whose oldest due delivery is oldest (none of
   * `exclude`). Each endpoint's deliveries are read from its own range of the queue index,
   * so a claim costs what it takes, however long another endpoint's backlog is.
   * A claimed delivery whose endpoint was deleted or disabled meanwhile is deleted (cancelled),
   * not returned.
   *
   * Bitmap scans are off for the claim: the queue changes faster than its statistics (a
   * burst takes it from empty to 40,000 rows within the minute autovacuum waits), and on
   * stale ones the planner reads an endpoint's whole range as a bitmap and sorts it (7 ms
   * per endpoint in bench:webhooks) instead of reading its first rows in index order.
   */
  async claim(opts: ClaimRequest): Promise<ClaimedJob[]> {
    return withTransaction(this.db, async (trx) => {
      await sql`set local enable_bitmapscan = off`.execute(trx);
      return this.claimIn(opts, trx);
    });
  }

  private async claimIn(opts: ClaimRequest, ex: Executor<WebhooksDb>): Promise<ClaimedJob[]> {
    const { now, discover } = opts;
    if (opts.endpoints.length === 0 && (!discover || discover.endpoints <= 0)) return [];
    const known = sql`select * from unnest(${opts.endpoints.map((e) => e.id)}::text[], ${opts.endpoints.map((e) => e.room)}::int[]) as k(endpoint_id, room)`;
    // The endpoints with deliveries in the queue, one index descent each (a loose index scan).
    const wanted = discover
      ? sql`
      with recursive queued as (
        (select endpoint_id from jobs order by endpoint_id limit 1)
        union all
        select (select j.endpoint_id from jobs j where j.endpoint_id > q.endpoint_id order by j.endpoint_id limit 1)
        from queued q where q.endpoint_id is not null
      ), found as (
        select q.endpoint_id, ${discover.room}::int as room from queued q
        cross join lateral (
          select j.next_attempt_at from jobs j
          where j.endpoint_id = q.endpoint_id and j.state = 'pending' and j.next_attempt_at <= ${now}
          order by j.next_attempt_at limit 1
        ) oldest
        where q.endpoint_id is not null and not (q.endpoint_id = any(${discover.exclude}::text[]))
        order by oldest.next_attempt_at
        limit ${discover.endpoints}
      ), wanted as (${known} union all select * from found)`
      : sql`with wanted as (${known})`;
    const { rows } = await sql<Omit<ClaimedJob, 'url' | 'secret_sealed'> & { url: string | null; secret_sealed: Buffer | null; disabled: boolean | null }>`
      ${wanted}, picked as (
        select p.id from wanted w
        cross join lateral (
          select j.id from jobs j
          where j.endpoint_id = w.endpoint_id and j.state = 'pending' and j.next_attempt_at <= ${now}
          order by j.next_attempt_at
          limit w.room
          for update of j skip locked
        ) p
      ), claimed as (
        -- No indexed column changes: a HOT update, no index entry written.
        update jobs set state = 'in_flight', lock_owner = ${opts.owner}, updated_at = ${now}
        from picked where jobs.id = picked.id
        returning jobs.id, jobs.endpoint_id, jobs.event_id, jobs.origin, jobs.attempts, jobs.max_attempts
      )
      select c.id, c.endpoint_id, c.event_id, c.origin, c.attempts, c.max_attempts,
             e.body, e.traceparent, p.url, p.secret_sealed, p.disabled
      from claimed c
      join events e on e.id = c.event_id
      left join endpoints p on p.id = c.endpoint_id`.execute(ex);
    const usable = (r: (typeof rows)[number]): r is typeof r & { url: string; secret_sealed: Buffer } => r.url !== null && r.secret_sealed !== null && r.disabled === false;
    const dropped = rows.filter((r) => !usable(r)).map((r) => r.id);
    if (dropped.length) await this.discard(opts.owner, dropped, ex);
    return rows.filter(usable).map(({ disabled: _, ...job }) => job);
  }

  /** Endpoints as they are now, by id (for a dispatcher following changes; a deleted one is missing). */
  async endpointStates(ids: string[], ex: Executor<WebhooksDb> = this.db): Promise<RecordedEndpoint[]> {
    if (ids.length === 0) return [];
    const rows = await ex.selectFrom('endpoints').select(['id', 'url', 'disabled', 'consecutive_failures']).where('id', 'in', ids).execute();
    return rows.map((r) => ({ id: r.id, url: r.url, disabled: r.disabled, disabledNow: false, consecutiveFailures: r.consecutive_failures }));
  }

  /** Deletes deliveries this worker holds that will not be attempted (their endpoint is disabled or gone). */
  async discard(owner: string, jobIds: number[], ex: Executor<WebhooksDb> = this.db): Promise<void> {
    if (jobIds.length === 0) return;
    await this.cancel(sql`delete from jobs where id = any(${jobIds}::bigint[]) and lock_owner = ${owner} and state = 'in_flight'`, ex);
  }

  /**
   * Runs `deleteJobs` (a delete from jobs) and clears the next_attempt_at of the attempt rows
   * that had scheduled the deleted deliveries' retries: those retries will not happen.
   */
  private async cancel(deleteJobs: RawBuilder<unknown>, ex: Executor<WebhooksDb>): Promise<void> {
    await sql`
      with cancelled as (${deleteJobs} returning endpoint_id, last_attempt_id)
      update attempts a set next_attempt_at = null
      from cancelled c where a.endpoint_id = c.endpoint_id and a.id = c.last_attempt_id`.execute(ex);
  }

  /** Registers or renews this worker's lease: its in-flight deliveries stay its own until `aliveUntil`. */
  async heartbeat(owner: string, aliveUntil: Date, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex
      .insertInto('workers')
      .values({ owner, alive_until: aliveUntil })
      .onConflict((oc) => oc.column('owner').doUpdateSet({ alive_until: aliveUntil }))
      .execute();
  }

  /** Renews this worker's lease; false when its row is gone (its lease ran out and another worker took its deliveries over). */
  async renew(owner: string, aliveUntil: Date, ex: Executor<WebhooksDb> = this.db): Promise<boolean> {
    const rows = await ex.updateTable('workers').set({ alive_until: aliveUntil }).where('owner', '=', owner).returning('owner').execute();
    return rows.length > 0;
  }

  /**
   * Hands back the in-flight deliveries of workers whose lease ran out (they died or
   * stalled), due at once, and forgets those workers. A delivery held by a worker with no
   * row at all counts as abandoned too. Returns how many deliveries were handed back.
   * It reads the queue's in-flight rows without an index: one scan per heartbeat (a third of
   * a lease) is cheaper than an index entry written with every claim.
   */
  async reapExpired(owner: string, now: Date, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      with gone as (
        delete from workers where alive_until < ${now} and owner <> ${owner}
        returning owner
      ), reaped as (
        -- Only the deliveries of the workers deleted here (a worker whose renewal commits
        -- meanwhile keeps its row, and so its deliveries), and of names with no row at all.
        update jobs set state = 'pending', lock_owner = null, updated_at = ${now}
        where state = 'in_flight' and lock_owner <> ${owner}
          and (lock_owner in (select owner from gone) or not exists (select 1 from workers w where w.owner = jobs.lock_owner))
        returning 1
      )
      select count(*)::int as n from reaped`.execute(ex);
    return rows[0]?.n ?? 0;
  }

  /** Gives claimed but unstarted deliveries back (shutdown), due at once for another worker. */
  async release(owner: string, jobIds: number[], ex: Executor<WebhooksDb> = this.db): Promise<void> {
    if (jobIds.length === 0) return;
    await sql`update jobs set state = 'pending', lock_owner = null where id = any(${jobIds}::bigint[]) and lock_owner = ${owner} and state = 'in_flight'`.execute(ex);
  }

  /**
   * Deliveries leased to `owner` since before `before` (ids), for the worker to hand back
   * those it does not hold. Like reapExpired, it reads the queue's in-flight rows without an
   * index, and the worker asks only every few leases.
   */
  async leasedBefore(owner: string, before: Date, ex: Executor<WebhooksDb> = this.db): Promise<number[]> {
    const rows = await ex.selectFrom('jobs').select('id').where('lock_owner', '=', owner).where('state', '=', 'in_flight').where('updated_at', '<', before).execute();
    return rows.map((r) => Number(r.id));
  }

  /** Forgets a stopped worker: nothing is leased to it any more. */
  async retire(owner: string, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex.deleteFrom('workers').where('owner', '=', owner).execute();
  }

  /** Cancels the pending deliveries of these endpoints (those in flight are cancelled when their attempt is recorded). */
  async cancelPending(endpointIds: string[], ex: Executor<WebhooksDb> = this.db): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.cancel(sql`delete from jobs where endpoint_id = any(${endpointIds}::text[]) and state = 'pending'`, ex);
  }

  /** Every delivery of a deleted endpoint; one in flight somewhere is then neither recorded nor retried. */
  async deleteForEndpoint(endpointId: string, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex.deleteFrom('jobs').where('endpoint_id', '=', endpointId).execute();
  }

  /**
   * Records a batch of finished attempts in one transaction: the deliveries still held are
   * read, the batch's endpoints read and locked, the counts decided by the rule of
   * domain/endpoint-health.ts, and one statement writes it all (writeRecord):
   * - each endpoint's outcome: a 2xx resets its failure count, failures add to it, and
   *   reaching `threshold` disables it and cancels its pending deliveries (only attempts of
   *   deliveries this worker still holds count, so a batch recorded again after the answer
   *   to its commit was lost counts nothing twice);
   * - one row per attempt, with its next attempt time unless the endpoint is now disabled,
   *   written only for deliveries this worker still holds: an attempt whose delivery was
   *   taken over (the lease ran out) is not recorded, and the new holder's is the one row;
   * - each delivery with a next attempt is due again then; every other one is finished and
   *   leaves the queue, as do those whose endpoint was deleted (they get no record).
   * Only deliveries this worker still holds are changed. Returns the batch's endpoints as
   * they are now (a deleted one is missing), so the worker can follow changes it did not make.
   *
   * The commit does not wait for the WAL flush: a record lost in a database crash leaves its
   * delivery leased to a worker that no longer holds it, which hands it back when it next
   * compares what is leased to it with what it holds (Dispatcher.releaseOrphans), so it is
   * attempted again (at-least-once), never lost.
   */
  async record(owner: string, batch: FinishedAttempt[], opts: { threshold: number; reason: string; now: Date }): Promise<RecordedEndpoint[]> {
    if (batch.length === 0) return [];
    return withTransaction(this.db, async (trx) => {
      const held = await this.holdForRecord(owner, batch.map((a) => a.job.id), trx);
      const attempts = batch.filter((a) => held.has(a.job.id));
      const before = await this.lockEndpoints([...new Set(batch.map((a) => a.job.endpoint_id))], trx);
      const outcomes = new Map<string, boolean[]>();
      for (const a of attempts) outcomes.set(a.job.endpoint_id, [...(outcomes.get(a.job.endpoint_id) ?? []), a.ok]);
      const after = before.map((e) => {
        const health = afterAttempts({ failures: e.consecutive_failures, disabled: e.disabled }, outcomes.get(e.id) ?? [], opts.threshold);
        return { id: e.id, url: e.url, disabled: health.disabled, disabledNow: health.disabledNow, consecutiveFailures: health.failures, changed: health.failures !== e.consecutive_failures || health.disabledNow };
      });
      const written = await this.writeRecord(owner, attempts, after, opts, trx);
      // A delivery read as held was taken over before the write (this instance's lease ran
      // out meanwhile): its attempt is in the counts but has no row. Rolled back; the
      // recorder records the batch again, and then it is not held and not counted.
      const expected = attempts.filter((a) => after.some((e) => e.id === a.job.endpoint_id)).length;
      if (written !== expected) throw new Error(`record: ${expected - written} of the batch's deliveries were taken over meanwhile; recorded again`);
      return after.map(({ changed: _, ...e }) => e);
    });
  }

  /**
   * Of these deliveries, those `owner` still holds. Not locked (a lock is a write of each
   * row, which the record then writes again): only an instance that takes over an expired
   * lease changes what another holds, and the record's statement changes only what is still
   * held at its moment.
   */
  private async holdForRecord(owner: string, jobIds: number[], ex: Executor<WebhooksDb>): Promise<Set<number>> {
    // Each looked up by primary key (a lateral probe): a condition left to the planner may
    // scan the whole queue, planned once (generic plans) when the queue was small.
    const { rows } = await sql<{ id: string }>`
      select a.id from unnest(${jobIds}::bigint[]) as a(id)
      cross join lateral (select 1 from jobs j where j.id = a.id and j.lock_owner = ${owner} and j.state = 'in_flight' limit 1) h`.execute(ex);
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** The endpoints of a batch as they are, locked until the record commits (a deleted one is missing). */
  private async lockEndpoints(ids: string[], ex: Executor<WebhooksDb>) {
    const { rows } = await sql<{ id: string; url: string; disabled: boolean; consecutive_failures: number }>`
      select id, url, disabled, consecutive_failures from endpoints where id = any(${ids}::text[])
      order by id for no key update`.execute(ex);
    return rows;
  }

  /**
   * Writes what a record decided, in one statement: the endpoints' counts (and the disables
   * with their reason); one attempt row per held attempt of an endpoint that still exists,
   * with its next attempt time unless the endpoint is disabled; each delivery with a next
   * attempt due again then, every other one removed; and the pending deliveries of the
   * endpoints disabled now cancelled, with the records that announced their retries.
   * Answers how many attempt rows it wrote. The commit does not wait for the WAL flush (see record).
   */
  private async writeRecord(
    owner: string,
    attempts: FinishedAttempt[],
    endpoints: (RecordedEndpoint & { changed: boolean })[],
    opts: { reason: string; now: Date },
    ex: Executor<WebhooksDb>,
  ): Promise<number> {
    const { reason, now } = opts;
    const byId = new Map(endpoints.map((e) => [e.id, e]));
    // An attempt of a deleted endpoint leaves no record; one of a disabled endpoint schedules nothing.
    const kept = attempts.filter((a) => byId.has(a.job.endpoint_id));
    const nextAt = (a: FinishedAttempt) => (byId.get(a.job.endpoint_id)?.disabled === false ? a.retryAt : null);
    // Deliveries with no next attempt leave the queue, those of deleted endpoints too.
    const done = attempts.filter((a) => nextAt(a) === null).map((a) => a.job.id);
    const col = <T>(f: (a: FinishedAttempt) => T) => kept.map(f);
    const changed = endpoints.filter((e) => e.changed);
    const newly = endpoints.filter((e) => e.disabledNow).map((e) => e.id);
    const { rows } = await sql<{ sync: string; written: number }>`
      with cfg as (
        select set_config('synchronous_commit', 'off', true) as sync
      ), a as (
        select * from unnest(
          ${col((a) => a.attemptId)}::text[], ${col((a) => a.job.id)}::bigint[], ${col((a) => a.job.endpoint_id)}::text[],
          ${col((a) => a.job.event_id)}::text[], ${col((a) => a.attempt)}::int[], ${col((a) => a.trigger)}::text[],
          ${col((a) => (a.ok ? 'delivered' : 'failed'))}::text[], ${col((a) => a.httpStatus)}::int[], ${col((a) => a.error)}::text[],
          ${col((a) => a.responseBody)}::text[], ${col((a) => a.durationMs)}::int[], ${col((a) => a.at)}::timestamptz[],
          ${col(nextAt)}::timestamptz[])
          as a(id, job_id, endpoint_id, event_id, attempt, triggered_by, status, http_status, error, response_body, duration_ms, created_at, next_at)
      ), counted as (
        update endpoints e set
          consecutive_failures = c.failures,
          disabled = e.disabled or c.newly,
          disabled_reason = case when c.newly then ${reason} else e.disabled_reason end,
          disabled_at = case when c.newly then ${now}::timestamptz else e.disabled_at end,
          updated_at = case when c.newly then ${now}::timestamptz else e.updated_at end
        from unnest(${changed.map((e) => e.id)}::text[], ${changed.map((e) => e.consecutiveFailures)}::int[], ${changed.map((e) => e.disabledNow)}::bool[])
          as c(id, failures, newly)
        where e.id = c.id
      ), retried as (
        update jobs j set state = 'pending', attempts = greatest(j.attempts, a.attempt), next_attempt_at = a.next_at, lock_owner = null,
                          last_attempt_id = a.id, updated_at = ${now}
        from a where j.id = a.job_id and a.next_at is not null and j.lock_owner = ${owner} and j.state = 'in_flight'
        returning j.id
      ), finished as (
        delete from jobs j using unnest(${done}::bigint[]) as d(id)
        where j.id = d.id and j.lock_owner = ${owner} and j.state = 'in_flight'
        returning j.id
      ), recorded as (
        -- Only the attempts of deliveries still held (rescheduled or removed just now, rows
        -- locked): one row per attempt, never a second after a lease taken over.
        insert into attempts (id, job_id, endpoint_id, event_id, attempt, triggered_by, status,
                              http_status, error, response_body, duration_ms, created_at, next_attempt_at)
        select id, job_id, endpoint_id, event_id, attempt, triggered_by, status,
               http_status, error, response_body, duration_ms, created_at, next_at
        from a where a.job_id in (select id from retried union all select id from finished)
        returning 1
      ), cancelled as (
        delete from jobs j
        where j.endpoint_id = any(${newly}::text[]) and j.state = 'pending'
        returning j.endpoint_id, j.last_attempt_id
      ), unscheduled as (
        -- The records that announced the cancelled retries no longer do.
        update attempts x set next_attempt_at = null
        from cancelled c where x.endpoint_id = c.endpoint_id and x.id = c.last_attempt_id
      )
      select cfg.sync, (select count(*) from recorded)::int as written from cfg`.execute(ex);
    return rows[0]!.written;
  }

  /**
   * Delivery records of one endpoint of the tenant, newest first (ids sort by creation
   * time); `before` is the last id of the previous page. The event type is the event's.
   */
  listAttempts(t: Tenant, endpointId: string, opts: { limit: number; before?: string | undefined }, ex: Executor<WebhooksDb> = this.db): Promise<AttemptRow[]> {
    let q = this.attemptsOf(t, endpointId, ex);
    if (opts.before !== undefined) q = q.where('a.id', '<', opts.before);
    return q.orderBy('a.id', 'desc').limit(opts.limit).execute();
  }

  findAttempt(t: Tenant, endpointId: string, attemptId: string, ex: Executor<WebhooksDb> = this.db): Promise<AttemptRow | undefined> {
    return this.attemptsOf(t, endpointId, ex).where('a.id', '=', attemptId).executeTakeFirst();
  }

  /** The attempts of an endpoint, only if the endpoint is the tenant's. */
  private attemptsOf(t: Tenant, endpointId: string, ex: Executor<WebhooksDb>) {
    return ex
      .selectFrom('attempts as a')
      .innerJoin('endpoints as p', 'p.id', 'a.endpoint_id')
      .innerJoin('events as e', 'e.id', 'a.event_id')
      .selectAll('a')
      .select('e.type as event_type')
      .where('p.org_id', '=', t.org_id)
      .where('p.env_id', '=', t.env_id)
      .where('a.endpoint_id', '=', endpointId);
  }

  /** The delivery records of a deleted endpoint (in the transaction that deletes it). */
  async deleteAttempts(endpointId: string, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex.deleteFrom('attempts').where('endpoint_id', '=', endpointId).execute();
  }

  /**
   * Queues one manual attempt of an event to an endpoint, if the endpoint is there and
   * enabled as the statement runs (a delete or disable committed just before wins): false if not.
   */
  async queueManual(row: { endpoint_id: string; event_id: string; now: Date }, ex: Executor<WebhooksDb> = this.db): Promise<boolean> {
    const { rows } = await sql`
      insert into jobs (endpoint_id, event_id, origin, state, max_attempts, next_attempt_at, created_at, updated_at)
      select e.id, ${row.event_id}, 'manual', 'pending', 1, ${row.now}, ${row.now}, ${row.now}
      from endpoints e where e.id = ${row.endpoint_id} and not e.disabled
      -- Waits for a disable or delete of the endpoint being committed, and sees its outcome.
      for share of e
      returning id`.execute(ex);
    return rows.length > 0;
  }

  /**
   * Recovery of one endpoint: stores the events and queues each one that has neither a
   * successful attempt nor a delivery still pending or in flight. Returns how many were queued.
   * An event stored here first is marked not fanned out: its fan-out, if still to come, happens.
   */
  async queueRecovery(endpointId: string, events: StoredEvent[], maxAttempts: number, now: Date, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    if (events.length === 0) return 0;
    await sql`
      insert into events (id, org_id, env_id, type, body, occurred_at, traceparent, fanned_out)
      select *, false from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.org_id)}::text[], ${events.map((e) => e.env_id)}::text[],
                                  ${events.map((e) => e.type)}::text[], ${events.map((e) => e.body)}::bytea[], ${events.map((e) => e.occurred_at)}::timestamptz[],
                                  ${events.map((e) => e.traceparent ?? null)}::text[])
      on conflict (id) do nothing`.execute(ex);
    const { rows } = await sql<{ id: number }>`
      insert into jobs (endpoint_id, event_id, origin, state, max_attempts, next_attempt_at, created_at, updated_at)
      select ${endpointId}, ev.id, 'recover', 'pending', ${maxAttempts}, ${now}, ${now}, ${now}
      from unnest(${events.map((e) => e.id)}::text[]) as ev(id)
      -- not in (one pass over the endpoint's queued deliveries, hashed), not a lookup per event.
      where ev.id not in (select j.event_id from jobs j where j.endpoint_id = ${endpointId})
        and not exists (select 1 from attempts a where a.endpoint_id = ${endpointId} and a.event_id = ev.id and a.status = 'delivered')
      returning id`.execute(ex);
    return rows.length;
  }
}
