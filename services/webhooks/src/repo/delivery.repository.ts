/**
 * Deliveries (jobs) and their attempts: fan-out of an event, claiming due work with
 * `for update skip locked` under a lease, recording finished attempts in batches, and the
 * tenant-scoped reads of the delivery records.
 */
import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { AttemptTable, JobOrigin, JobState, WebhooksDb } from './tables';
import type { Tenant } from './endpoint.repository';

export type AttemptRow = Selectable<AttemptTable>;

export interface StoredEvent {
  id: string;
  org_id: string;
  env_id: string;
  type: string;
  body: Buffer;
  occurred_at: Date;
}

export interface ClaimedJob {
  id: number;
  endpoint_id: string;
  event_id: string;
  origin: JobOrigin;
  attempts: number;
  max_attempts: number;
  event_type: string;
  body: Buffer;
  url: string;
  secret_sealed: Buffer;
  org_id: string;
  env_id: string;
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

export interface EndpointTally {
  endpointId: string;
  hadSuccess: boolean;
  /** Failures after the last success of the batch (all of them when there was none). */
  trailingFailures: number;
}

export interface EndpointState {
  id: string;
  disabled: boolean;
  newlyDisabled: boolean;
}

export class DeliveryRepository {
  constructor(private readonly db: Kysely<WebhooksDb>) {}

  /**
   * Stores each event (once) and one delivery per matching enabled endpoint of its org and
   * environment, in one statement for the whole batch; a repeated event adds nothing.
   * With `lease`, the new deliveries are created already claimed by that worker (it will
   * attempt them at once, sparing a claim round trip) and returned; without, they are
   * created pending and only counted.
   */
  async fanOut(
    events: StoredEvent[],
    opts: { maxAttempts: number; now: Date; lease?: { owner: string; until: Date } | undefined },
    ex: Executor<WebhooksDb> = this.db,
  ): Promise<{ created: number; claimed: ClaimedJob[] }> {
    if (events.length === 0) return { created: 0, claimed: [] };
    const { now, lease } = opts;
    const { rows } = await sql<Omit<ClaimedJob, 'body'>>`
      with ev as (
        select * from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.org_id)}::text[], ${events.map((e) => e.env_id)}::text[],
                             ${events.map((e) => e.type)}::text[], ${events.map((e) => e.body)}::bytea[], ${events.map((e) => e.occurred_at)}::timestamptz[])
          as ev(id, org_id, env_id, type, body, occurred_at)
      ), targets as (
        select ev.id as event_id, e.id as endpoint_id from ev
        join endpoints e on e.org_id = ev.org_id and e.env_id = ev.env_id and not e.disabled
          and (e.event_types is null or ev.type = any(e.event_types))
      ), stored as (
        insert into events (id, org_id, env_id, type, body, occurred_at)
        select ev.id, ev.org_id, ev.env_id, ev.type, ev.body, ev.occurred_at from ev
        where exists (select 1 from targets t where t.event_id = ev.id)
        on conflict (id) do nothing
      ), inserted as (
        insert into jobs (endpoint_id, event_id, origin, state, max_attempts, next_attempt_at, lock_owner, locked_until, created_at, updated_at)
        select endpoint_id, event_id, 'event', ${lease ? 'in_flight' : 'pending'}, ${opts.maxAttempts}, ${now},
               ${lease?.owner ?? null}::text, ${lease?.until ?? null}::timestamptz, ${now}, ${now}
        from targets
        on conflict (event_id, endpoint_id) where origin = 'event' do nothing
        returning id, endpoint_id, event_id
      )
      -- Joined by primary key, not back to targets: the planner cannot estimate CTE rows and would nest-loop them.
      select i.id::int as id, i.endpoint_id, i.event_id, 'event' as origin, 0 as attempts, ${opts.maxAttempts}::int as max_attempts,
             ev.type as event_type, p.url, p.secret_sealed, ev.org_id, ev.env_id
      from inserted i
      join endpoints p on p.id = i.endpoint_id
      join ev on ev.id = i.event_id`.execute(ex);
    if (!lease) return { created: rows.length, claimed: [] };
    // The body is the one just written: not read back from the database.
    const bodies = new Map(events.map((e) => [e.id, e.body]));
    return { created: rows.length, claimed: rows.map((r) => ({ ...r, body: bodies.get(r.event_id) ?? Buffer.alloc(0) })) };
  }

  /**
   * Claims up to `limit` due deliveries for `owner` until `leaseUntil`: at most
   * `perEndpoint` of one endpoint, none of the endpoints in `skipEndpoints` (those this
   * worker already has enough of), oldest due first.
   */
  async claim(opts: { owner: string; now: Date; leaseUntil: Date; limit: number; perEndpoint: number; skipEndpoints: string[] }, ex: Executor<WebhooksDb> = this.db): Promise<ClaimedJob[]> {
    const { rows } = await sql<ClaimedJob>`
      with candidates as (
        select id, next_attempt_at, row_number() over (partition by endpoint_id order by next_attempt_at, id) as rn
        from (
          select id, endpoint_id, next_attempt_at from jobs
          where state = 'pending' and next_attempt_at <= ${opts.now}
            and not (endpoint_id = any(${opts.skipEndpoints}::text[]))
          order by next_attempt_at
          limit ${Math.max(opts.limit * 4, 200)}
        ) due
      ), picked as (
        select j.id from jobs j
        -- = any(array(...)), not in (...): the planner then locks by primary key instead of joining the whole due index.
        where j.id = any(array(select id from candidates where rn <= ${opts.perEndpoint} order by next_attempt_at limit ${opts.limit}))
          and j.state = 'pending'
        for update of j skip locked
      ), claimed as (
        update jobs set state = 'in_flight', lock_owner = ${opts.owner}, locked_until = ${opts.leaseUntil}, updated_at = ${opts.now}
        from picked where jobs.id = picked.id
        returning jobs.id, jobs.endpoint_id, jobs.event_id, jobs.origin, jobs.attempts, jobs.max_attempts
      )
      select c.id::int as id, c.endpoint_id, c.event_id, c.origin, c.attempts, c.max_attempts,
             e.type as event_type, e.body, p.url, p.secret_sealed, p.org_id, p.env_id
      from claimed c
      join events e on e.id = c.event_id
      join endpoints p on p.id = c.endpoint_id`.execute(ex);
    return rows;
  }

  /** Keeps this worker's leases alive. */
  async renewLeases(owner: string, leaseUntil: Date, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex.updateTable('jobs').set({ locked_until: leaseUntil }).where('lock_owner', '=', owner).where('state', '=', 'in_flight').execute();
  }

  /** Hands back deliveries whose worker stopped renewing its lease (it died). */
  async reapExpired(owner: string, now: Date, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    const res = await ex
      .updateTable('jobs')
      .set({ state: 'pending', lock_owner: null, locked_until: null, updated_at: now })
      .where('state', '=', 'in_flight')
      .where('locked_until', '<', now)
      .where('lock_owner', '<>', owner)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** Gives claimed but unstarted deliveries back (shutdown), due at once for another worker. */
  async release(owner: string, jobIds: number[], ex: Executor<WebhooksDb> = this.db): Promise<void> {
    if (jobIds.length === 0) return;
    await ex
      .updateTable('jobs')
      .set({ state: 'pending', lock_owner: null, locked_until: null })
      .where('lock_owner', '=', owner)
      .where('state', '=', 'in_flight')
      .where('id', 'in', jobIds)
      .execute();
  }

  /**
   * Applies a batch of endpoint outcomes: a 2xx resets the failure count, failures add to
   * it, and reaching `threshold` disables the endpoint and cancels its pending deliveries.
   * Returns the state of each endpoint still existing.
   */
  async tallyEndpoints(tallies: EndpointTally[], threshold: number, reason: string, now: Date, ex: Executor<WebhooksDb>): Promise<EndpointState[]> {
    if (tallies.length === 0) return [];
    const sorted = [...tallies].sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
    const { rows } = await sql<{ id: string; disabled: boolean; was_disabled: boolean }>`
      with v as (
        select * from unnest(${sorted.map((t) => t.endpointId)}::text[], ${sorted.map((t) => t.hadSuccess)}::bool[], ${sorted.map((t) => t.trailingFailures)}::int[])
          as v(id, had_success, tail_failures)
      ), old as (
        select e.id, e.disabled, e.consecutive_failures from endpoints e join v on v.id = e.id
        order by e.id
        for no key update of e
      ), counted as (
        select old.id, old.disabled as was_disabled,
               case when v.had_success then v.tail_failures else old.consecutive_failures + v.tail_failures end as failures
        from old join v on v.id = old.id
      )
      update endpoints e set
        consecutive_failures = c.failures,
        disabled = e.disabled or c.failures >= ${threshold},
        disabled_reason = case when not e.disabled and c.failures >= ${threshold} then ${reason} else e.disabled_reason end,
        disabled_at = case when not e.disabled and c.failures >= ${threshold} then ${now}::timestamptz else e.disabled_at end,
        updated_at = case when not e.disabled and c.failures >= ${threshold} then ${now}::timestamptz else e.updated_at end
      from counted c where e.id = c.id
      returning e.id, e.disabled, c.was_disabled`.execute(ex);
    const newly = rows.filter((r) => r.disabled && !r.was_disabled).map((r) => r.id);
    if (newly.length) await this.cancelPending(newly, now, ex);
    return rows.map((r) => ({ id: r.id, disabled: r.disabled, newlyDisabled: r.disabled && !r.was_disabled }));
  }

  async cancelPending(endpointIds: string[], now: Date, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex
      .updateTable('jobs')
      .set({ state: 'cancelled', next_attempt_at: null, updated_at: now })
      .where('endpoint_id', 'in', endpointIds)
      .where('state', '=', 'pending')
      .execute();
  }

  /** One row per attempt (a repeated (job, attempt) adds nothing), then the jobs' new states. */
  async recordAttempts(owner: string, finished: (FinishedAttempt & { state: JobState })[], now: Date, ex: Executor<WebhooksDb>): Promise<void> {
    if (finished.length === 0) return;
    const col = <T>(f: (a: FinishedAttempt & { state: JobState }) => T) => finished.map(f);
    await sql`
      insert into attempts (id, job_id, endpoint_id, org_id, env_id, event_id, event_type, attempt, triggered_by, status,
                            http_status, error, response_body, duration_ms, created_at, next_attempt_at)
      select * from unnest(
        ${col((a) => a.attemptId)}::text[], ${col((a) => a.job.id)}::bigint[], ${col((a) => a.job.endpoint_id)}::text[],
        ${col((a) => a.job.org_id)}::text[], ${col((a) => a.job.env_id)}::text[], ${col((a) => a.job.event_id)}::text[],
        ${col((a) => a.job.event_type)}::text[], ${col((a) => a.attempt)}::int[], ${col((a) => a.trigger)}::text[],
        ${col((a) => (a.ok ? 'delivered' : 'failed'))}::text[], ${col((a) => a.httpStatus)}::int[], ${col((a) => a.error)}::text[],
        ${col((a) => a.responseBody)}::text[], ${col((a) => a.durationMs)}::int[], ${col((a) => a.at)}::timestamptz[],
        ${col((a) => a.retryAt)}::timestamptz[])
      on conflict (job_id, attempt) do nothing`.execute(ex);
    await sql`
      update jobs j set state = v.state, attempts = greatest(j.attempts, v.attempt), next_attempt_at = v.next_at,
                        lock_owner = null, locked_until = null, updated_at = ${now}
      from unnest(${col((a) => a.job.id)}::bigint[], ${col((a) => a.state)}::text[], ${col((a) => a.attempt)}::int[], ${col((a) => a.retryAt)}::timestamptz[])
        as v(id, state, attempt, next_at)
      where j.id = v.id and j.lock_owner = ${owner} and j.state = 'in_flight'`.execute(ex);
  }

  /** Delivery records of one endpoint, newest first; `before` is a seq from the previous page. */
  listAttempts(t: Tenant, endpointId: string, opts: { limit: number; before?: number | undefined }, ex: Executor<WebhooksDb> = this.db): Promise<AttemptRow[]> {
    let q = ex.selectFrom('attempts').selectAll().where('org_id', '=', t.org_id).where('env_id', '=', t.env_id).where('endpoint_id', '=', endpointId);
    if (opts.before !== undefined) q = q.where('seq', '<', opts.before);
    return q.orderBy('seq', 'desc').limit(opts.limit).execute();
  }

  findAttempt(t: Tenant, endpointId: string, attemptId: string, ex: Executor<WebhooksDb> = this.db): Promise<AttemptRow | undefined> {
    return ex
      .selectFrom('attempts')
      .selectAll()
      .where('org_id', '=', t.org_id)
      .where('env_id', '=', t.env_id)
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', attemptId)
      .executeTakeFirst();
  }

  async insertJob(row: { endpoint_id: string; event_id: string; origin: JobOrigin; max_attempts: number; now: Date }, ex: Executor<WebhooksDb> = this.db): Promise<void> {
    await ex
      .insertInto('jobs')
      .values({
        endpoint_id: row.endpoint_id,
        event_id: row.event_id,
        origin: row.origin,
        state: 'pending',
        max_attempts: row.max_attempts,
        next_attempt_at: row.now,
        lock_owner: null,
        locked_until: null,
        created_at: row.now,
        updated_at: row.now,
      })
      .execute();
  }

  /**
   * Recovery of one endpoint: stores the events and queues each one that has neither a
   * successful attempt nor a delivery still pending or in flight. Returns how many were queued.
   */
  async queueRecovery(endpointId: string, events: StoredEvent[], maxAttempts: number, now: Date, ex: Executor<WebhooksDb> = this.db): Promise<number> {
    if (events.length === 0) return 0;
    await sql`
      insert into events (id, org_id, env_id, type, body, occurred_at)
      select * from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.org_id)}::text[], ${events.map((e) => e.env_id)}::text[],
                           ${events.map((e) => e.type)}::text[], ${events.map((e) => e.body)}::bytea[], ${events.map((e) => e.occurred_at)}::timestamptz[])
      on conflict (id) do nothing`.execute(ex);
    const { rows } = await sql<{ id: number }>`
      insert into jobs (endpoint_id, event_id, origin, state, max_attempts, next_attempt_at, created_at, updated_at)
      select ${endpointId}, ev.id, 'recover', 'pending', ${maxAttempts}, ${now}, ${now}, ${now}
      from unnest(${events.map((e) => e.id)}::text[]) as ev(id)
      where not exists (select 1 from jobs j where j.endpoint_id = ${endpointId} and j.event_id = ev.id and j.state in ('pending', 'in_flight', 'delivered'))
        and not exists (select 1 from attempts a where a.endpoint_id = ${endpointId} and a.event_id = ev.id and a.status = 'delivered')
      returning id`.execute(ex);
    return rows.length;
  }
}
