// The floor of bench:webhooks: the least a webhook dispatcher can do and still keep what issue 5
// asks to be durable, in its own process (forked by bench/webhooks.mjs), so that the bench can
// measure in the same run how close to the bare undici loop any such service can come on this
// machine. It is not the service and has none of its duties beyond the bare minimum:
//   - a durable JetStream pull consumer of the namespace's events (only those published after it
//     starts), read in batches of up to 500;
//   - per batch, one statement: a pending row per (event, endpoint), unique, the event kept as
//     its stream sequence (no body in PostgreSQL), committed before the batch is acked;
//   - per endpoint, 4 requests in flight through undici's handler API (cheaper than the bare
//     loop's request()), each signed (HMAC-SHA256 over timestamp.body), the body the message's
//     own bytes;
//   - per 128 attempts (or 20 ms), one statement: the pending rows deleted and one attempt row
//     each inserted (primary key by endpoint and id, the index a newest-first listing needs).
// No endpoint lookup (the 4 endpoints are given), no validation of the envelope beyond JSON,
// no retries, leases, claims, auto-disable or recovery.
// Told `durable: false`, it writes nothing to PostgreSQL at all (acks on receipt, records
// nothing): what consuming the stream, signing and posting alone reach here.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Namespace } from '@mailroom/messaging';

// What to do, from the parent: listened for before anything is awaited, so it cannot be missed.
const told = new Promise((resolve) => process.once('message', resolve));
const env = process.env;
const ns = new Namespace(env.BUS_NAMESPACE);
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
// The bus admits nobody anonymous: the floor connects as the run's tests identity (libs/testing
// bus-auth.ts), as the bench itself does. Stored messages are sealed in a header; the floor posts
// their bytes as they are and checks no seal (it has none of the service's duties).
const creds = env.NATS_CREDENTIALS_DIR ? readFileSync(join(env.NATS_CREDENTIALS_DIR, 'tests.creds')) : undefined;
const nc = await connect({ servers: env.NATS_URL.split(','), name: 'bench-floor', ...(creds ? { authenticator: credsAuthenticator(creds) } : {}) });
const agent = new Agent({ pipelining: 1, keepAliveTimeout: 4_000, allowH2: false });

await pool.query(`
  create table if not exists bench_floor_jobs (
    id bigint generated always as identity primary key,
    event_id text not null, endpoint_id text not null, stream_seq bigint not null,
    unique (event_id, endpoint_id));
  create table if not exists bench_floor_attempts (
    endpoint_id text not null, id bigint not null, event_id text not null, status text not null,
    http_status int not null, attempt int not null, duration_ms int not null, created_at timestamptz not null,
    primary key (endpoint_id, id))`);

const { endpoints, durable } = await told;
const queues = new Map(endpoints.map((e) => [e.id, []]));
for (const e of endpoints) Object.assign(e, { waiters: [], origin: new URL(e.url).origin, path: new URL(e.url).pathname });
let queued = 0;
let roomWaiter;
const QUEUE_LIMIT = 1_024;

function fatal(err) {
  console.error('floor:', err);
  process.exit(1);
}

// Records, group-committed.
let finished = [];
let flushing = false;
let flushTimer;
let attemptSeq = Date.now() * 1_000;
async function flush() {
  if (!durable) finished = [];
  if (flushing || finished.length === 0) return;
  flushing = true;
  clearTimeout(flushTimer);
  flushTimer = undefined;
  try {
    while (finished.length) {
      const batch = finished.splice(0, 128);
      await pool.query({
        name: 'floor-record',
        text: `with done as (delete from bench_floor_jobs where id = any($1::bigint[]))
          insert into bench_floor_attempts (endpoint_id, id, event_id, status, http_status, attempt, duration_ms, created_at)
          select * from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::timestamptz[])`,
        values: [
          batch.map((a) => a.jobId),
          batch.map((a) => a.endpointId),
          batch.map(() => attemptSeq++),
          batch.map((a) => a.eventId),
          batch.map((a) => (a.ok ? 'delivered' : 'failed')),
          batch.map((a) => a.httpStatus),
          batch.map(() => 1),
          batch.map((a) => a.durationMs),
          batch.map((a) => a.at),
        ],
      });
    }
  } finally {
    flushing = false;
  }
}
function scheduleFlush() {
  if (finished.length >= 128) void flush().catch(fatal);
  else
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      void flush().catch(fatal);
    }, 20);
}

/** The cheapest POST undici has: its handler API, no response stream; resolves with the status (0: none). */
function post(endpoint, body, headers) {
  return new Promise((resolve) => {
    let status = 0;
    agent.dispatch(
      { origin: endpoint.origin, path: endpoint.path, method: 'POST', headers: { ...headers, 'content-length': String(body.length) }, body },
      {
        onRequestStart: () => {},
        onResponseStart: (_c, statusCode) => (status = statusCode),
        onResponseData: () => {},
        onResponseEnd: () => resolve(status),
        onResponseError: () => resolve(0),
      },
    );
  });
}

async function worker(endpoint) {
  const queue = queues.get(endpoint.id);
  for (;;) {
    const job = queue.shift();
    if (!job) {
      await new Promise((resolve) => endpoint.waiters.push(resolve));
      continue;
    }
    queued--;
    if (roomWaiter && queued <= QUEUE_LIMIT / 2) roomWaiter();
    const at = new Date();
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signature = createHmac('sha256', endpoint.secret).update(`${timestamp}.`).update(job.body).digest('hex');
    const started = performance.now();
    const httpStatus = await post(endpoint, job.body, { 'content-type': 'application/json', 'x-service-timestamp': timestamp, 'x-service-signature': signature });
    finished.push({ jobId: job.id, endpointId: endpoint.id, eventId: job.eventId, ok: httpStatus >= 200 && httpStatus < 300, httpStatus, durationMs: Math.round(performance.now() - started), at });
    scheduleFlush();
  }
}
for (const e of endpoints) for (let i = 0; i < 4; i++) void worker(e);

// Fan-out, group-committed: what arrives during a write goes in the next one.
let pending = [];
let writing = false;
async function write() {
  writing = true;
  while (pending.length) {
    if (queued > QUEUE_LIMIT) await new Promise((resolve) => (roomWaiter = resolve));
    roomWaiter = undefined;
    const batch = pending.splice(0, 500);
    const eventIds = [];
    const endpointIds = [];
    const seqs = [];
    const byEvent = new Map();
    for (const m of batch) {
      const event = JSON.parse(m.string());
      byEvent.set(event.id, m.data);
      for (const e of endpoints) {
        eventIds.push(event.id);
        endpointIds.push(e.id);
        seqs.push(m.seq);
      }
    }
    const { rows } = durable
      ? await pool.query({
          name: 'floor-fan-out',
          text: `insert into bench_floor_jobs (event_id, endpoint_id, stream_seq)
            select * from unnest($1::text[], $2::text[], $3::bigint[]) on conflict do nothing returning id, event_id, endpoint_id`,
          values: [eventIds, endpointIds, seqs],
        })
      : { rows: eventIds.map((eventId, i) => ({ id: i, event_id: eventId, endpoint_id: endpointIds[i] })) };
    for (const m of batch) m.ack();
    for (const r of rows) {
      queues.get(r.endpoint_id).push({ id: r.id, eventId: r.event_id, body: byEvent.get(r.event_id) });
      queued++;
    }
    for (const e of endpoints) for (const wake of e.waiters.splice(0)) wake();
  }
  writing = false;
}

const jsm = await jetstreamManager(nc);
const stream = ns.stream('EVENTS');
const consumer = ns.consumer(`bench-floor-${durable ? 'durable' : 'bare'}`);
await jsm.consumers.add(stream, {
  durable_name: consumer,
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.New,
  filter_subject: ns.subject('events.>'),
  max_ack_pending: 10_000,
});
const messages = await (await jetstream(nc).consumers.get(stream, consumer)).consume({ max_messages: 1_000 });
process.send({ ready: true });
process.on('message', (m) => {
  if (m === 'exit') process.exit(0);
});
for await (const m of messages) {
  pending.push(m);
  if (!writing) write().catch(fatal);
}
