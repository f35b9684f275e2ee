/**
 * The transactional outbox against the real servers: relayed once, removed only when JetStream
 * has it, and published in the trace of the work that wrote it, whichever instance relays it.
 */
import { newId, type EnvelopeOf } from '@mailroom/contracts';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { ensureStreams, type Bus } from '@mailroom/messaging';
import { ROOT_CONTEXT, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { createLogger } from '@mailroom/platform';
import { connectTestBus, createTestContext, type TestContext } from '@mailroom/testing';
import { Outbox } from '../src';

let ctx: TestContext;
let db: Kysely<unknown>;
let bus: Bus;
const log = createLogger({ service: 'test', level: 'silent' });

beforeAll(async () => {
  ctx = await createTestContext({}, { bus: 'empty' });
  db = createDb({ url: ctx.env.DATABASE_URL!, schema: 'svc', max: 2 });
  await sql`create schema svc`.execute(db);
  // The table as every service's migrations create it.
  await sql`create table outbox (id text primary key, subject text, payload text not null, created_at timestamptz not null default now(), published_at timestamptz, traceparent text)`.execute(db);
  bus = await connectTestBus(ctx.env);
});

afterAll(async () => {
  await bus?.nc.close();
  await db?.destroy();
  await ctx?.cleanup();
});

function rejected(): EnvelopeOf<'message.rejected'> {
  return {
    id: newId('event'),
    type: 'message.rejected',
    timestamp: new Date().toISOString(),
    org_id: newId('organization'),
    env_id: newId('environment'),
    data: { inbox_id: newId('inbox'), from_address: 'agent@x.test', to_addresses: ['a@b.test'], subject: 'hi', rejection_reason: 'rate_limited', rejection_detail: 'too many', rejected_at: new Date().toISOString() },
  };
}

const pending = async () => (await sql<{ id: string }>`select id from outbox order by id`.execute(db)).rows.map((r) => r.id);
const stored = async (stream: string) => (await bus.jsm.streams.info(bus.ns.stream(stream))).state.messages;

it('keeps the rows while JetStream cannot take them, then publishes each once and removes it', async () => {
  const outbox = new Outbox(db, bus, log);
  const event = rejected();
  const work = { raw_id: `raw_${'a'.repeat(26)}`, received_at: new Date().toISOString(), mail_from: 'm@x.test', rcpt_to: ['bounces+x@b.test'] };
  await outbox.add(db, event);
  await outbox.addWork(db, 'mail.feedback', 'work-1', work);

  // No streams yet: every publish fails, the transaction rolls back, nothing is lost.
  await expect(outbox.relay()).rejects.toThrow();
  expect(await pending()).toEqual([event.id, 'work-1'].sort());

  await ensureStreams(bus, ['EVENTS', 'MAIL_FEEDBACK']);
  expect(await outbox.relay()).toBe(2);
  expect(await pending()).toEqual([]);
  expect(await stored('EVENTS')).toBe(1);
  expect(await stored('MAIL_FEEDBACK')).toBe(1);

  const got = await bus.jsm.streams.getMessage(bus.ns.stream('EVENTS'), { last_by_subj: bus.ns.subject('events.message.rejected') });
  expect(got?.json()).toEqual(event);
  expect(got?.header?.get('Nats-Msg-Id')).toBe(event.id);

  // A relay that repeats itself (a crash between publish and commit) is stored once.
  await outbox.add(db, event);
  expect(await outbox.relay()).toBe(1);
  expect(await stored('EVENTS')).toBe(1);
  expect(await outbox.relay()).toBe(0);
});

it('relays in batches, and leaves alone rows an older relay marked published', async () => {
  await ensureStreams(bus, ['EVENTS']);
  const before = await stored('EVENTS');
  const old = rejected();
  await sql`insert into outbox (id, payload, published_at) values (${old.id}, ${JSON.stringify(old)}, now())`.execute(db);
  const outbox = new Outbox(db, bus, log, { batch: 3 });
  for (let i = 0; i < 7; i++) await outbox.add(db, rejected());
  expect(await outbox.relay()).toBe(7);
  expect(await stored('EVENTS')).toBe(before + 7);
  expect(await pending()).toEqual([old.id]);
});

it('skips a row that names no known work queue instead of blocking the others', async () => {
  await ensureStreams(bus, ['EVENTS']);
  await sql`insert into outbox (id, subject, payload) values ('bad-1', 'mail.nowhere', '{}')`.execute(db);
  const outbox = new Outbox(db, bus, log);
  await outbox.add(db, rejected());
  expect(await outbox.relay()).toBe(2);
  expect(await pending()).toEqual(expect.not.arrayContaining(['bad-1']));
});

it('refuses to write a row larger than the bus takes (payload_too_large), before anything is committed', () => {
  const outbox = new Outbox(db, bus, log);
  const big = rejected();
  big.data.rejection_detail = 'x'.repeat(outbox.maxPayloadBytes());
  expect(() => outbox.eventRow(big)).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  const work = { raw_id: `raw_${'b'.repeat(26)}`, received_at: new Date().toISOString(), mail_from: 'x'.repeat(outbox.maxPayloadBytes()), rcpt_to: ['bounces+x@b.test'] };
  expect(() => outbox.workRow('mail.feedback', 'work-big', work)).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  expect(outbox.eventRow(rejected()).payload.length).toBeLessThan(outbox.maxPayloadBytes());
});

it('keeps aside, marked, a row written larger than the bus takes, and publishes the rows after it', async () => {
  await ensureStreams(bus, ['EVENTS']);
  const before = await stored('EVENTS');
  const outbox = new Outbox(db, bus, log, { batch: 3 });
  // Written before rows were checked (or the server's limit lowered since): first in line.
  const big = rejected();
  big.id = `evt_${'0'.repeat(26)}`;
  big.data.rejection_detail = 'x'.repeat(outbox.maxPayloadBytes());
  const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
  await sql`insert into outbox (id, payload, traceparent) values (${big.id}, ${JSON.stringify(big)}, ${traceparent})`.execute(db);
  for (let i = 0; i < 4; i++) await outbox.add(db, rejected());
  expect(await outbox.relay()).toBe(5);
  expect(await stored('EVENTS')).toBe(before + 4);
  const { rows } = await sql<{ id: string; published_at: Date | null; traceparent: string | null }>`select id, published_at, traceparent from outbox where id = ${big.id}`.execute(db);
  expect(rows).toEqual([{ id: big.id, published_at: expect.any(Date), traceparent }]);
  // And out of every batch after.
  await outbox.add(db, rejected());
  expect(await outbox.relay()).toBe(1);
});

const traceparentOfRow = async (id: string) => (await sql<{ traceparent: string | null }>`select traceparent from outbox where id = ${id}`.execute(db)).rows[0]?.traceparent;

it('keeps no trace context with telemetry off (the API without a propagator), even within a span', async () => {
  const outbox = new Outbox(db, bus, log);
  const event = rejected();
  const writing = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: TraceFlags.SAMPLED });
  await context.with(writing, () => outbox.add(db, event));
  expect(await traceparentOfRow(event.id)).toBeNull();
  await ensureStreams(bus, ['EVENTS']);
  await outbox.relay();
});

describe('with telemetry on (the W3C propagator and a context manager)', () => {
  beforeAll(() => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    propagation.disable();
    context.disable();
  });

  it('publishes a row relayed by another instance (the writer gone) in the trace of the work that wrote it; one written outside any, in none', async () => {
    await ensureStreams(bus, ['EVENTS']);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const writer = new Outbox(db, bus, log);
    const [traced, untraced] = [rejected(), rejected()];
    const writing = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    await context.with(writing, () => writer.add(db, traced));
    await writer.add(db, untraced);
    expect([await traceparentOfRow(traced.id), await traceparentOfRow(untraced.id)]).toEqual([`00-${traceId}-${spanId}-01`, null]);

    // Another instance relays them, in a trace of its own: each is published in its row's.
    const other = new Outbox(db, bus, log);
    const last = (await bus.jsm.streams.info(bus.ns.stream('EVENTS'))).state.last_seq;
    await context.with(trace.setSpanContext(ROOT_CONTEXT, { traceId: 'e'.repeat(32), spanId: 'f'.repeat(16), traceFlags: TraceFlags.SAMPLED }), () => other.relay());
    const published = await Promise.all([last + 1, last + 2].map((seq) => bus.jsm.streams.getMessage(bus.ns.stream('EVENTS'), { seq })));
    const traceparents = Object.fromEntries(published.map((m) => [m!.json<{ id: string }>().id, m!.header?.get('traceparent') || null]));
    expect(traceparents).toEqual({ [traced.id]: `00-${traceId}-${spanId}-01`, [untraced.id]: null });
  });
});
