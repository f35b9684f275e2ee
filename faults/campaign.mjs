// npm run test:faults — the fault campaign (issue 34, part 4). Three nats-servers clustered
// on loopback with every stream at R3, a PostgreSQL of the run's own, and the platform as
// separate processes: 2 instances each of mail-ingest, mailbox, mail-send and webhooks, one of
// gateway, auth and orgs. Load: FAULTS_MAILS inbound mails over SMTP (default 5,000), spread
// over both SMTP edges, and FAULTS_REPLIES replies through the API (default 1,000), to a relay
// sink; two webhook endpoints subscribed to every event type. During the load, in turn:
// kill -9 one instance of each doubled service (started again at once), kill -9 the NATS node
// leading the busiest stream (started again once a new leader answers), and restart
// PostgreSQL (fast shutdown, start). Then it checks, with bounded waits, that every mail
// answered 250 is stored exactly once, every reply reached the relay once (or more under
// the same Message-ID: at-least-once into the relay, counted apart), every event reached
// each endpoint at least once, no consumer holds pending or unacknowledged work, and the
// platform answers; prints the summary and exits 1 on any failure.
import nodemailer from 'nodemailer';
import { createDb, sql } from '@mailroom/db';
import { EventTap, waitFor } from '@mailroom/testing';
import { INBOXES, MAIL_DOMAIN, PORTS, bringUp, tenant } from './setup.mjs';
import { crashes, ready } from './platform.mjs';
import { portAnswers, say } from './servers.mjs';

const MAILS = Number(process.env.FAULTS_MAILS ?? 5000);
const REPLIES = Math.min(Number(process.env.FAULTS_REPLIES ?? 1000), MAILS);
const SMTP_IN_FLIGHT = 16;
const REPLIES_IN_FLIGHT = 8;
/** Where in the inbound load (share of mails answered 250) each fault lands. */
// A fault waits for the one before it to recover: the shares are the earliest points.
const FAULTS = [
  { at: 0.05, kind: 'nats' },
  { at: 0.1, kind: 'postgres' },
  { at: 0.15, kind: 'service', service: 'mail-ingest' },
  { at: 0.25, kind: 'service', service: 'mailbox' },
  { at: 0.35, kind: 'service', service: 'mail-send' },
  { at: 0.45, kind: 'service', service: 'webhooks' },
];
const started = Date.now();
const t = () => ((Date.now() - started) / 1000).toFixed(1);
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

const up = await bringUp();
let failed = false;
try {
  failed = !(await campaign());
} catch (err) {
  failed = true;
  say(`campaign aborted: ${err.stack ?? err}`);
} finally {
  // A failed run keeps its directory: every process's log is there.
  if (failed) process.env.FAULTS_KEEP = '1';
  await up.stop();
}
process.exit(failed ? 1 : 0);

async function campaign() {
  const platform = await up.platform({ orgs: 1, auth: 1, mailbox: 2, 'mail-send': 2, webhooks: 2, 'mail-ingest': 2, gateway: 1 });
  say(`platform up at ${t()} s: ${platform.instances.map((i) => i.name).join(', ')}`);
  const tn = await tenant(up);
  const [receiverA, receiverB] = up.receivers;
  const db = createDb({ url: up.ctx.env.DATABASE_URL, schema: 'mailbox', max: 2 });

  // --- the load ---------------------------------------------------------------------------
  const mail = { sent: 0, attempts: 0, accepted: new Set(), unconfirmed: new Map(), refused: 0 };
  const transports = [0, 1].map((i) =>
    nodemailer.createTransport({ host: '127.0.0.1', port: PORTS.smtp(i), pool: true, maxConnections: SMTP_IN_FLIGHT / 2, maxMessages: Infinity, secure: false, ignoreTLS: true, name: 'mail.sender.test', connectionTimeout: 10_000, socketTimeout: 60_000 }),
  );
  /** One mail, tried on the edges in turn until one answers 250 (as a sending MTA retries). */
  async function deliver(i) {
    const messageId = `<faults-${i}@sender.test>`;
    const raw = [`From: Sender ${i} <s${i}@sender.test>`, `To: agent${i % INBOXES}@${MAIL_DOMAIN}`, `Subject: Fault campaign mail ${i}`, `Message-ID: ${messageId}`, `Date: ${new Date().toUTCString()}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', `Mail ${i} of the fault campaign.`, ''].join('\r\n');
    mail.sent++;
    for (let attempt = 0; attempt < 40; attempt++) {
      const edge = (i + attempt) % 2;
      mail.attempts++;
      try {
        await transports[edge].sendMail({ envelope: { from: `s${i}@sender.test`, to: [`agent${i % INBOXES}@${MAIL_DOMAIN}`] }, raw });
        mail.accepted.add(messageId);
        return;
      } catch (err) {
        // No 250: the sender keeps it and tries again. The edge may have stored it all the
        // same (killed between the hand-off and the 250): such mails may be stored twice.
        mail.unconfirmed.set(messageId, (mail.unconfirmed.get(messageId) ?? 0) + 1);
        if (err.responseCode >= 500) mail.refused++;
        if (!(await portAnswers(PORTS.smtp(1 - edge)))) await waitFor(async () => (await portAnswers(PORTS.smtp(0))) || (await portAnswers(PORTS.smtp(1))), { timeoutMs: 120_000, intervalMs: 50, what: 'an SMTP edge listening' });
      }
    }
    throw new Error(`mail ${i} was refused 40 times`);
  }
  async function pool(n, inFlight, task) {
    let next = 0;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < n) await task(next++);
    }));
  }

  // Replies go to received mails, as they are announced to endpoint A.
  const targets = [];
  receiverA.onEvent = (e) => e.type === 'message.received' && targets.length < REPLIES && targets.push(e.data);
  const reply = { calls: 0, answered: new Map(), retried: 0, failures: [] };
  async function replyTo(i) {
    const target = await waitFor(() => targets[i], { timeoutMs: 600_000, intervalMs: 20, what: `a received mail for reply ${i}` });
    const key = `faults-reply-${i}`;
    for (let attempt = 0; attempt < 120; attempt++) {
      reply.calls++;
      let res;
      try {
        res = await tn.api.post(`/api/v1/inboxes/${target.inbox_id}/messages/${target.message_id}/reply`, { text_body: `Reply ${key} from the fault campaign.` }, { headers: { 'idempotency-key': key } });
      } catch {
        res = { status: 0 };
      }
      if (res.status === 200) {
        reply.answered.set(key, res.body.message_id);
        return;
      }
      // 5xx (a service or the bus unavailable) and 409 "still being processed" are retried
      // with the same Idempotency-Key, as a client should; anything else is a failure.
      if (res.status !== 0 && res.status < 500 && !(res.status === 409 && res.body?.error?.code === 'idempotency_in_progress')) {
        reply.failures.push(`${key}: ${res.status} ${res.text}`);
        return;
      }
      reply.retried++;
      await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** Math.min(attempt, 5))));
    }
    reply.failures.push(`${key}: no answer after 120 tries`);
  }

  // --- the faults ---------------------------------------------------------------------------
  const stored = () => receiverA.events.size;
  const timeline = [];
  let loadDone = false;
  async function resumed(from) {
    const before = stored();
    await waitFor(() => stored() > before || loadDone, { timeoutMs: 300_000, intervalMs: 20, what: 'mail stored and announced again' });
    return Date.now() - from;
  }
  async function runFaults() {
    for (const fault of FAULTS) {
      await waitFor(() => mail.accepted.size >= fault.at * MAILS || loadDone, { timeoutMs: 3_600_000, intervalMs: 20, what: `${fault.at * 100}% of the mails accepted` });
      if (loadDone) {
        timeline.push({ at: t(), what: `${fault.kind} ${fault.service ?? ''}: not run, the load was over` });
        continue;
      }
      const at = t();
      const t0 = Date.now();
      if (fault.kind === 'service') {
        const victim = platform.of(fault.service)[0];
        await victim.kill('SIGKILL');
        const dead = Date.now();
        const again = resumed(t0);
        await victim.start();
        const back = Date.now();
        timeline.push({ at, what: `kill -9 ${victim.name} (pid gone in ${s(dead - t0)}); started again`, recovery: `ready again after ${s(back - t0)}; next new event at endpoint A ${s(await again)} after the kill` });
      } else if (fault.kind === 'nats') {
        const { stream, leader } = await busiestStream();
        const index = up.nats.nodes.findIndex((n) => n.name === leader);
        await up.nats.kill(index);
        const again = resumed(t0);
        const elected = await waitFor(async () => {
          const info = await up.bus.jsm.streams.info(stream).catch(() => undefined);
          return info?.cluster?.leader && info.cluster.leader !== leader && info.cluster.leader;
        }, { timeoutMs: 120_000, intervalMs: 50, what: `a new leader of ${stream}` });
        const electedAt = Date.now();
        await up.nats.start(index);
        const rejoined = Date.now();
        await waitFor(async () => {
          const info = await up.bus.jsm.streams.info(stream).catch(() => undefined);
          return info?.cluster?.replicas?.length === 2 && info.cluster.replicas.every((r) => r.current && !r.offline);
        }, { timeoutMs: 300_000, intervalMs: 100, what: `${leader} current again in ${stream}` });
        timeline.push({
          at,
          what: `kill -9 NATS node ${leader}, leader of ${stream} (the busiest stream); started again once a new leader answered`,
          recovery: `${elected} leader after ${s(electedAt - t0)}; next new event at endpoint A ${s(await again)} after the kill; ${leader} healthy ${s(rejoined - t0)} and its replica current ${s(Date.now() - t0)} after the kill`,
        });
      } else {
        const again = resumed(t0);
        await up.postgres.restart();
        const back = Date.now();
        timeline.push({ at, what: 'PostgreSQL restarted (fast shutdown, start)', recovery: `answering again after ${s(back - t0)}; next new event at endpoint A ${s(await again)} after the stop` });
      }
      say(`${timeline.at(-1).at} s: ${timeline.at(-1).what} -> ${timeline.at(-1).recovery}`);
    }
  }
  async function busiestStream() {
    let best;
    for await (const info of up.bus.jsm.streams.list()) {
      if (!info.config.name.startsWith(`${up.ctx.id}_`) || !info.cluster?.leader) continue;
      if (!best || info.state.last_seq > best.state.last_seq) best = info;
    }
    return { stream: best.config.name, leader: best.cluster.leader };
  }

  say(`load: ${MAILS} mails over SMTP (${SMTP_IN_FLIGHT} in flight over both edges), ${REPLIES} replies through the API (${REPLIES_IN_FLIGHT} in flight)`);
  const loadStarted = Date.now();
  const faults = runFaults();
  const progress = setInterval(() => say(`${t()} s: ${mail.accepted.size}/${MAILS} mails accepted, ${stored()} announced, ${reply.answered.size}/${REPLIES} replies answered, ${up.sink.received.length} at the relay`), 15_000);
  try {
    await Promise.all([pool(MAILS, SMTP_IN_FLIGHT, deliver), pool(REPLIES, REPLIES_IN_FLIGHT, replyTo)]);
    loadDone = true;
    await faults;
  } finally {
    clearInterval(progress);
    loadDone = true;
    for (const tr of transports) tr.close();
  }
  const loadSeconds = (Date.now() - loadStarted) / 1000;
  say(`load sent in ${loadSeconds.toFixed(1)} s; waiting for the platform to finish its work`);

  // --- afterwards ----------------------------------------------------------------------------
  const checks = [];
  const check = (ok, what) => checks.push({ ok, what });
  // Matched by the envelope sender (s<i>@sender.test, one per mail), which the edge records
  // whether or not the parser read the headers (on a loaded machine it may give up after 10 s).
  const storedRows = async () => (await sql`select mail_from as id, count(*)::int as n from messages where direction = 'inbound' and mail_from like 's%@sender.test' group by 1`.execute(db)).rows;
  const headerId = (from) => `<faults-${/^s(\d+)@/.exec(from)[1]}@sender.test>`;
  const rows = await waitFor(async () => {
    const r = await storedRows();
    const have = new Set(r.map((x) => headerId(x.id)));
    return [...mail.accepted].every((id) => have.has(id)) && r;
  }, { timeoutMs: 600_000, intervalMs: 500, what: 'every accepted mail stored' }).catch(async (err) => (say(err.message), storedRows()));
  const storedCount = new Map(rows.map((x) => [headerId(x.id), x.n]));
  const { rows: partly } = await sql`select count(*)::int as n from messages where direction = 'inbound' and parse_error is not null`.execute(db);
  const lostMail = [...mail.accepted].filter((id) => !storedCount.has(id));
  const twiceConfirmed = [...mail.accepted].filter((id) => (storedCount.get(id) ?? 0) > 1 && !mail.unconfirmed.has(id));
  const twiceAfterRetry = [...mail.accepted].filter((id) => (storedCount.get(id) ?? 0) > 1 && mail.unconfirmed.has(id));
  const beyondAttempts = [...mail.accepted].filter((id) => (storedCount.get(id) ?? 0) > 1 + (mail.unconfirmed.get(id) ?? 0));
  check(timeline.every((f) => f.recovery), `every fault ran during the load (${timeline.filter((f) => f.recovery).length}/${FAULTS.length}; a smaller FAULTS_MAILS may end first)`);
  check(mail.accepted.size === MAILS, `every mail answered 250 in the end (${mail.accepted.size}/${MAILS})`);
  check(lostMail.length === 0, `every mail answered 250 is stored (lost: ${lostMail.length}${lostMail.length ? `, e.g. ${lostMail.slice(0, 3).join(' ')}` : ''})`);
  check(twiceConfirmed.length === 0, `a mail answered 250 at its first try is stored exactly once (stored twice: ${twiceConfirmed.length})`);
  check(beyondAttempts.length === 0, `a mail tried again after no answer is stored at most once per try (more: ${beyondAttempts.length})`);

  const replyKeys = [...reply.answered.keys()];
  const atRelay = await waitFor(() => {
    const got = new Set(up.sink.received.map((m) => m.token));
    return replyKeys.every((k) => got.has(k)) && up.sink.received;
  }, { timeoutMs: 600_000, intervalMs: 200, what: 'every reply at the relay' }).catch((err) => (say(err.message), up.sink.received));
  const relayByToken = new Map();
  for (const m of atRelay) {
    if (!m.token) continue;
    const e = relayByToken.get(m.token) ?? { copies: 0, ids: new Set() };
    e.copies++;
    e.ids.add(m.messageId);
    relayByToken.set(m.token, e);
  }
  const lostReplies = replyKeys.filter((k) => !relayByToken.has(k));
  const relayedAgain = replyKeys.filter((k) => relayByToken.get(k)?.copies > 1 && relayByToken.get(k).ids.size === 1);
  const twoMessages = replyKeys.filter((k) => (relayByToken.get(k)?.ids.size ?? 0) > 1);
  const { rows: outbound } = await sql`select (regexp_match(text_body, 'faults-reply-[0-9]+'))[1] as token, count(*)::int as n from messages where direction = 'outbound' group by 1`.execute(db);
  const madeTwice = outbound.filter((o) => o.n > 1);
  check(reply.failures.length === 0 && reply.answered.size === REPLIES, `every reply answered 200 (${reply.answered.size}/${REPLIES}${reply.failures.length ? `; ${reply.failures.slice(0, 3).join('; ')}` : ''})`);
  check(lostReplies.length === 0, `every reply reached the relay (lost: ${lostReplies.length})`);
  check(twoMessages.length === 0 && madeTwice.length === 0, `each reply is one message (one Message-ID at the relay, one outbound row): ${twoMessages.length} with two Message-IDs, ${madeTwice.length} stored twice`);

  // Every event of the run, read back from the EVENTS stream, at each endpoint.
  const tap = await EventTap.start(up.ctx.env);
  const streamState = await up.bus.jsm.streams.info(up.bus.ns.stream('EVENTS'));
  await waitFor(() => tap.events.length >= streamState.state.messages, { timeoutMs: 120_000, intervalMs: 100, what: 'the EVENTS stream read back' });
  const expected = tap.events.slice();
  await tap.stop();
  const missing = (r) => expected.filter((e) => !r.events.has(e.id));
  await waitFor(() => up.receivers.every((r) => missing(r).length === 0), { timeoutMs: 600_000, intervalMs: 200, what: 'every event at each endpoint' }).catch((err) => say(err.message));
  const received = expected.filter((e) => e.type === 'message.received').length;
  const sentEvents = expected.filter((e) => e.type === 'message.sent').length;
  for (const [name, r] of [['A', receiverA], ['B', receiverB]]) {
    check(missing(r).length === 0, `endpoint ${name}: every one of the ${expected.length} events delivered at least once (lost: ${missing(r).length}; bad signatures: ${r.badSignatures})`);
  }
  const storedTotal = rows.reduce((n, x) => n + x.n, 0);
  check(received === storedTotal, `one message.received per stored mail (${received} events, ${storedTotal} stored)`);

  // No work left behind: every consumer of the run's streams has nothing pending or unacknowledged.
  const consumersLeft = async () => {
    const left = [];
    for await (const info of up.bus.jsm.streams.list()) {
      if (!info.config.name.startsWith(`${up.ctx.id}_`)) continue;
      for await (const c of up.bus.jsm.consumers.list(info.config.name)) if (c.num_pending + c.num_ack_pending > 0) left.push(`${c.name}: ${c.num_pending} pending, ${c.num_ack_pending} unacknowledged`);
    }
    return left;
  };
  const stuck = await waitFor(async () => (await consumersLeft()).length === 0 && [], { timeoutMs: 400_000, intervalMs: 500, what: 'every consumer drained' }).catch(async (err) => (say(err.message), consumersLeft()));
  check(stuck.length === 0, `no work item left unacknowledged (consumers num_pending and num_ack_pending at 0)${stuck.length ? `: ${stuck.join('; ')}` : ''}`);

  // The platform answers normally, with no manual step: every instance ready, the API, and a
  // new mail through each edge stored and announced to both endpoints.
  const unready = [];
  for (const [n, inst] of platform.instances.entries()) if (!(await ready(PORTS.health(n)))) unready.push(inst.name);
  check(unready.length === 0, `every instance answers /readyz 200${unready.length ? ` (not: ${unready.join(', ')})` : ''}`);
  const list = await tn.api.get('/api/v1/inboxes?limit=100');
  check(list.status === 200 && list.body.data.length === INBOXES, `GET /api/v1/inboxes answers 200 with the ${INBOXES} inboxes`);
  const refusedAfter = [];
  for (const edge of [0, 1]) {
    const tr = nodemailer.createTransport({ host: '127.0.0.1', port: PORTS.smtp(edge), secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await tr.sendMail({ from: 'after@sender.test', to: `agent0@${MAIL_DOMAIN}`, subject: `After the campaign, edge ${edge + 1}`, text: 'Still here?' }).catch((err) => refusedAfter.push(`edge ${edge + 1}: ${err.message}`));
  }
  check(refusedAfter.length === 0, `each SMTP edge answers 250 to a new mail${refusedAfter.length ? ` (${refusedAfter.join('; ')})` : ''}`);
  const announced = (r) => [...r.events.values()].filter((e) => e.type === 'message.received').length;
  check(crashes.length === 0, `no instance exited by itself${crashes.length ? `: ${crashes.map((c) => `${c.name} (pid ${c.pid}, exit ${c.code}) at ${((c.at - started) / 1000).toFixed(1)} s`).join('; ')}` : ''}`);
  const after = await waitFor(() => up.receivers.every((r) => announced(r) >= received + 2 - refusedAfter.length), { timeoutMs: 60_000, intervalMs: 100, what: 'the two new mails at both endpoints' }).then(() => true, () => false);
  check(after, 'a new mail through each SMTP edge is stored and delivered to both endpoints');

  await db.destroy();
  const dupDeliveries = (r) => r.deliveries - r.events.size;
  // --- the summary ---------------------------------------------------------------------------
  const line = (label, value) => console.log(`  ${label.padEnd(44)} ${value}`);
  console.log(`\ntest:faults — ${MAILS} inbound mails over SMTP and ${REPLIES} replies through the API; 3 NATS nodes, streams R3; 2 instances of mail-ingest, mailbox, mail-send, webhooks; load sent in ${loadSeconds.toFixed(1)} s, whole run ${t()} s\n`);
  console.log('faults (time from the start of the run):');
  for (const f of timeline) console.log(`  ${String(f.at).padStart(6)} s  ${f.what}\n            recovery: ${f.recovery ?? '-'}`);
  console.log('\ninbound mail:');
  line('sent (distinct mails)', mail.sent);
  line('SMTP transactions tried', `${mail.attempts} (${mail.attempts - mail.sent} again after no 250; ${mail.refused} of them refused with 5xx)`);
  line('accepted (answered 250)', mail.accepted.size);
  line('stored (distinct Message-IDs)', storedCount.size);
  line('stored twice after a retry with no 250', `${twiceAfterRetry.length} (the sender's retry: SMTP is at-least-once when a 250 is lost)`);
  line('stored twice after a 250 at the first try', twiceConfirmed.length);
  line('lost (answered 250, not stored)', lostMail.length);
  line('stored with the parse cut short (load)', `${partly[0].n} (the parser's 10 s bound on a loaded machine; raw bytes kept)`);
  console.log('replies:');
  line('API calls (with retries, same Idempotency-Key)', `${reply.calls} for ${REPLIES} replies (${reply.retried} retried)`);
  line('answered 200', reply.answered.size);
  line('at the relay (distinct replies)', relayByToken.size);
  line('relayed again, same Message-ID', `${relayedAgain.length} (at-least-once into the relay; dedupe by Message-ID)`);
  line('two messages for one reply', twoMessages.length + madeTwice.length);
  line('lost', lostReplies.length);
  console.log('webhook events:');
  line('events published (EVENTS stream)', `${expected.length} (${received} message.received, ${sentEvents} message.sent, ${expected.length - received - sentEvents} other)`);
  for (const [name, r] of [['A', receiverA], ['B', receiverB]]) line(`endpoint ${name}: delivered / duplicated / lost`, `${r.events.size} / ${dupDeliveries(r)} / ${missing(r).length}`);
  console.log('\nchecks:');
  for (const c of checks) console.log(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.what}`);
  const ok = checks.every((c) => c.ok);
  console.log(`\n${ok ? 'PASS' : 'FAIL'}: ${checks.filter((c) => c.ok).length}/${checks.length} checks\n`);
  return ok;
}
