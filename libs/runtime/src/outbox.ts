/**
 * Transactional outbox: an event (or a work item, or an internal fact) that must match a database write is
 * inserted in the same transaction (table `outbox` in the service's schema: id text primary
 * key, subject text (null = a public event), payload text, created_at, published_at,
 * traceparent; see services/mailbox/migrations), then relayed to JetStream after the commit and deleted,
 * with msgID = the event id so a relay that repeats itself is stored once. The relay runs
 * right after a commit (kick) and on an interval for what a crash or an outage left behind;
 * several instances share the work with SKIP LOCKED.
 *
 * Tracing: a row keeps the W3C traceparent of the work that wrote it (taken when the row is
 * built; null with telemetry off), and is published in that trace by whichever instance
 * relays it, however much later. The relay's own queries run outside any trace (polling is
 * not traced).
 */
import { AppError, FACTS, WORK_ITEMS, eventEnvelope, eventSubject, eventTypeSchema, workSubjectSchema, type EventEnvelope, type Fact, type FactSubject, type WorkSubject } from '@mailroom/contracts';
import { z } from 'zod';
import { sql, type Kysely, type Transaction } from '@mailroom/db';
import { maxBodyBytes, publishStored, storedContext, traceparentOf, type Bus } from '@mailroom/messaging';
import { context, trace } from '@opentelemetry/api';
import { Rounds, type EventSink, type Logger, type OutboxRow } from '@mailroom/platform';
import { watchOutbox } from './outbox-metrics';

export type { OutboxRow } from '@mailroom/platform';

export interface OutboxOptions {
  intervalMs?: number;
  batch?: number;
  /** The service whose outbox this is, named in its backlog's metric (outbox-metrics.ts); none: the backlog is not reported. */
  service?: string;
}

/** What the relay reads of an event row: its type, for the subject. */
const typedEvent = z.object({ type: eventTypeSchema });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class Outbox<DB = unknown> implements EventSink<Transaction<DB>> {
  private readonly rounds: Rounds;
  private failures = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly opts: OutboxOptions = {},
  ) {
    // One relay at a time; a relay publishes until nothing is pending, so it never asks for more.
    const relayed = async () => (await context.with(trace.deleteSpan(context.active()), () => this.relay()), false);
    this.rounds = new Rounds(relayed, (err) => {
      this.failures++;
      if (this.failures === 1 || this.failures % 30 === 0) this.log.warn({ err, failures: this.failures }, 'outbox relay failed; will retry');
    }, opts.intervalMs ?? 2_000);
  }

  /** Writes the event in the caller's transaction; it is published after the commit. */
  async add(trx: Kysely<DB> | Transaction<DB>, event: EventEnvelope): Promise<void> {
    const row = this.eventRow(event);
    await sql`insert into outbox (id, payload, traceparent) values (${row.id}, ${row.payload}, ${row.traceparent ?? null}) on conflict (id) do nothing`.execute(trx);
  }

  /** Writes a work item in the caller's transaction; `id` is its msgID (one item per id). */
  async addWork<S extends WorkSubject>(trx: Kysely<DB> | Transaction<DB>, subject: S, id: string, item: z.input<(typeof WORK_ITEMS)[S]>): Promise<void> {
    const row = this.workRow(subject, id, item);
    await sql`insert into outbox (id, subject, payload, traceparent) values (${row.id}, ${row.subject}, ${row.payload}, ${row.traceparent ?? null}) on conflict (id) do nothing`.execute(trx);
  }

  /** Writes an internal fact (libs/contracts FACTS) in the caller's transaction; `id` is its msgID. */
  async addFact<S extends FactSubject>(trx: Kysely<DB> | Transaction<DB>, subject: S, id: string, fact: Fact<S>): Promise<void> {
    const row = this.fitting({ id, subject, payload: JSON.stringify(FACTS[subject].parse(fact)) });
    await sql`insert into outbox (id, subject, payload, traceparent) values (${row.id}, ${row.subject}, ${row.payload}, ${row.traceparent ?? null}) on conflict (id) do nothing`.execute(trx);
  }

  /**
   * The outbox row of an event, validated, for a caller that writes it inside a statement of
   * its own (one round trip instead of a transaction); `kick()` after it.
   */
  eventRow(event: EventEnvelope): OutboxRow {
    const valid = eventEnvelope.parse(event);
    return this.fitting({ id: valid.id, subject: null, payload: JSON.stringify(valid) });
  }

  /** The outbox row of a work item, validated; see eventRow. */
  workRow<S extends WorkSubject>(subject: S, id: string, item: z.input<(typeof WORK_ITEMS)[S]>): OutboxRow {
    return this.fitting({ id, subject, payload: JSON.stringify(WORK_ITEMS[subject].parse(item)) });
  }

  /** The largest payload (bytes of its JSON) the relay can publish. */
  maxPayloadBytes(): number {
    return maxBodyBytes(this.bus);
  }

  /**
   * Refuses, before anything is committed, a row the relay could never publish: written, it
   * would hold up every row after it. A send over the limit is a 413 to its caller.
   */
  private fitting(row: OutboxRow): OutboxRow {
    const bytes = Buffer.byteLength(row.payload);
    const max = this.maxPayloadBytes();
    // In the trace of the work that writes it (the active context's).
    if (bytes <= max) return { ...row, traceparent: traceparentOf() };
    throw new AppError(
      'payload_too_large',
      row.subject === 'mail.outbound'
        ? `the message comes to ${bytes} bytes once encoded (bodies, headers, recipients; attachments apart); at most ${max} bytes can be queued for sending`
        : `${row.subject ?? 'the event'} comes to ${bytes} bytes once encoded; at most ${max} bytes can be published`,
    );
  }

  private unwatched: (() => void) | undefined;

  start(): void {
    this.rounds.start();
    if (this.opts.service && !this.unwatched) this.unwatched = watchOutbox(this.db as Kysely<unknown>, this.opts.service);
  }

  /** Relays pending events soon; call after committing a transaction that added some. */
  kick(): void {
    this.rounds.kick();
  }

  /**
   * Publishes everything pending, batch by batch. A batch is taken out of the table and
   * published inside one transaction: if any publish fails, the transaction rolls back and
   * the rows are there again for the next relay (JetStream drops the repeats by msgID).
   * Rows were validated when written (eventRow, workRow), so their payloads go out as stored.
   */
  async relay(): Promise<number> {
    let total = 0;
    const batch = this.opts.batch ?? 100;
    for (;;) {
      const published = await this.db.transaction().execute(async (trx) => {
        // published_at is no longer set: rows an older relay marked as published stay out of every batch.
        const { rows } = await sql<{ id: string; subject: string | null; payload: string; traceparent: string | null }>`
          delete from outbox where id in (
            select id from outbox where published_at is null order by id limit ${batch} for update skip locked)
          returning id, subject, payload, traceparent`.execute(trx);
        // A row too large for the server (written before rows were checked, or the server's
        // limit lowered since) can never be published: it is kept, marked, out of every batch,
        // so the rows after it go on (an operator finds it by published_at).
        const max = this.maxPayloadBytes();
        const tooLarge = rows.filter((row) => Buffer.byteLength(row.payload) > max);
        for (const row of tooLarge) {
          this.log.error({ id: row.id, subject: row.subject, bytes: Buffer.byteLength(row.payload), max }, 'outbox row larger than the bus takes: kept aside, not published');
          await sql`insert into outbox (id, subject, payload, traceparent, published_at) values (${row.id}, ${row.subject}, ${row.payload}, ${row.traceparent}, now())`.execute(trx);
        }
        // Published together: each is acknowledged on its own, and the batch is gone only when all were.
        await Promise.all(rows.filter((row) => !tooLarge.includes(row)).map((row) => this.publish(row)));
        return rows.length;
      });
      total += published;
      this.failures = 0;
      if (published < batch) return total;
    }
  }

  /** Published in the trace of the work that wrote the row (a trace of its own when it kept none). */
  private publish(row: OutboxRow): Promise<void> {
    return context.with(storedContext(row.traceparent), () => this.publishRow(row));
  }

  private async publishRow(row: OutboxRow): Promise<void> {
    const data = Buffer.from(row.payload);
    if (row.subject !== null) {
      if (Object.hasOwn(FACTS, row.subject)) {
        await publishStored(this.bus, row.subject, data, { msgID: row.id });
        return;
      }
      const subject = workSubjectSchema.safeParse(row.subject);
      if (!subject.success) {
        this.log.error({ id: row.id, subject: row.subject }, 'outbox row names no known work queue; skipped');
        return;
      }
      await publishStored(this.bus, subject.data, data, { msgID: row.id });
      return;
    }
    const event = typedEvent.safeParse(parseJson(row.payload));
    if (!event.success) {
      // Unreachable unless the table was edited by hand: never block the queue on it.
      this.log.error({ id: row.id }, 'outbox row is not an event; skipped');
      return;
    }
    await publishStored(this.bus, eventSubject(event.data.type), data, { msgID: row.id });
  }

  async stop(): Promise<void> {
    this.unwatched?.();
    this.unwatched = undefined;
    await this.rounds.stop();
  }
}
