/**
 * What reports do to a send, against the real database: per-recipient message.delivered
 * (once per recipient, whatever the order of reports and bounces), reports that wait for the
 * send's `sent` record, and complaints that name, and suppress, only those who complained.
 * Reports about mail from the platform itself mark it and stop the platform mailing the address.
 * Reports are real bytes through the real parser; the outbox is read, not relayed.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql, transactor, type Kysely } from '@mailroom/db';
import { eventEnvelope, newId, type EnvelopeOf, type EventEnvelope, type FeedbackMail } from '@mailroom/contracts';
import { ManualClock, createLogger } from '@mailroom/platform';
import type { Bus } from '@mailroom/messaging';
import { Outbox } from '@mailroom/runtime';
import { corpusPath, createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { SendRepository, type SendRow } from '../src/repo/send.repository';
import type { SendDb } from '../src/repo/tables';
import { parseFeedback } from '../src/domain/feedback';
import { newEventId } from '../src/domain/event-ids';
import { FeedbackHandler, SENT_WAIT_MS } from '../src/domain/feedback-handler';
import { SystemMailFeedback } from '../src/domain/system-mail/system-feedback';
import { SystemMailRepository } from '../src/repo/system-mail.repository';
import { before } from '../src/domain/status';
import { Verp } from '../src/domain/verp';

const BOUNCE_DOMAIN = 'bounce.mailroom.test';
const ORG = newId('organization');
const ENV = newId('environment');
const log = createLogger({ service: 'test', level: 'silent' });

let ctx: TestContext;
let db: Kysely<SendDb>;
let repo: SendRepository;
let outbox: Outbox<SendDb>;
let clock: ManualClock;
let verp: Verp;
let handler: FeedbackHandler;
let systemMails: SystemMailRepository;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<SendDb>(ctx, { schema: 'mail_send', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new SendRepository(db);
  // Written in the handler's transactions, read by the tests: never relayed (no bus).
  outbox = new Outbox<SendDb>(db, {} as Bus, log);
  await outbox.stop();
  clock = new ManualClock(new Date());
  verp = new Verp(randomBytes(32).toString('base64'), BOUNCE_DOMAIN);
  systemMails = new SystemMailRepository(db);
  handler = new FeedbackHandler(transactor(db), repo, verp, parseFeedback, outbox, clock, new SystemMailFeedback(transactor(db), systemMails, () => clock.now()));
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

/** A send to `recipients`, handed over and (unless `recorded` is false) recorded as sent at the clock's time. */
async function send(recipients: string[], opts: { recorded?: boolean } = {}): Promise<SendRow> {
  const message_id = newId('message');
  const base = { message_id, org_id: ORG, env_id: ENV, inbox_id: newId('inbox'), thread_id: newId('thread'), from_address: 'agent@mailroom.test', to_addresses: recipients, subject: 'Hello', provider: 'smtp' };
  await repo.startSending([base]);
  if (opts.recorded !== false) await recordSent(message_id);
  return (await repo.find(message_id))!;
}

async function recordSent(messageId: string): Promise<void> {
  const row = (await repo.find(messageId))!;
  const now = clock.now();
  const event: EventEnvelope = {
    id: newEventId(),
    type: 'message.sent',
    timestamp: now.toISOString(),
    org_id: ORG,
    env_id: ENV,
    data: { message_id: messageId, thread_id: row.thread_id, inbox_id: row.inbox_id, from_address: row.from_address, to_addresses: row.to_addresses, subject: row.subject, provider_message_id: 'Q1@relay.test', sent_at: now.toISOString() },
  };
  await repo.recordSent([{ message_id: messageId, sent_at: now, provider: 'smtp', provider_message_id: 'Q1@relay.test', event: outbox.eventRow(event) }], before('sent'));
}

/** The events written for a message, in outbox (publication) order. */
async function events(messageId: string): Promise<EventEnvelope[]> {
  const { rows } = await sql<{ payload: string }>`select payload from outbox order by id`.execute(db);
  return rows.map((r) => eventEnvelope.parse(JSON.parse(r.payload))).filter((e) => 'message_id' in e.data && e.data.message_id === messageId);
}

function delivered(list: EventEnvelope[]) {
  return list.flatMap((e) => (e.type === 'message.delivered' ? [e] : []));
}

async function suppressed(): Promise<string[]> {
  return (await repo.listSuppressions(ORG, ENV, 100, undefined)).map((s) => `${s.address} ${s.reason}${s.message_id ? ` ${s.message_id}` : ''}`).sort();
}

function item(messageId: string, receivedAt = clock.now()): FeedbackMail {
  return { raw_id: newId('raw'), received_at: receivedAt.toISOString(), mail_from: '', rcpt_to: [verp.address(messageId)] };
}

const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

/** A DSN as Postfix sends it: one block per recipient. */
function dsn(messageId: string, recipients: [string, 'delivered' | 'failed'][]): Buffer {
  return mail(
    'From: Mail Delivery System <MAILER-DAEMON@relay.test>',
    `To: ${verp.address(messageId)}`,
    'Subject: Delivery report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'This is the mail system at host relay.test.',
    '',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; relay.test',
    `Original-Envelope-Id: ${messageId}`,
    ...recipients.flatMap(([address, action]) => [
      '',
      `Original-Recipient: rfc822;${address}`,
      `Final-Recipient: rfc822; ${address}`,
      `Action: ${action}`,
      `Status: ${action === 'delivered' ? '2.0.0' : '5.1.1'}`,
      `Diagnostic-Code: smtp; ${action === 'delivered' ? '250 2.0.0 Ok: queued as 4F1' : `550 5.1.1 <${address}>: User unknown`}`,
    ]),
    '',
    '--b1--',
    '',
  );
}

/** An ARF report; `field` names the recipient (Original-Rcpt-To or Removal-Recipient) or nobody. */
function arf(messageId: string, type: string, opts: { field?: [string, string]; originalTo?: string; originalCc?: string } = {}): Buffer {
  return mail(
    'From: <fbl@isp.test>',
    `To: ${verp.address(messageId)}`,
    'Subject: Feedback report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf"',
    '',
    '--arf',
    'Content-Type: text/plain',
    '',
    'A feedback report.',
    '--arf',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${type}`,
    'User-Agent: FBL/1.0',
    'Version: 1',
    `Original-Mail-From: <${verp.address(messageId)}>`,
    ...(opts.field ? [`${opts.field[0]}: <${opts.field[1]}>`] : []),
    '',
    '--arf',
    'Content-Type: message/rfc822',
    '',
    `Return-Path: <${verp.address(messageId)}>`,
    'From: agent@mailroom.test',
    `To: ${opts.originalTo ?? 'a@one.test'}`,
    ...(opts.originalCc ? [`Cc: ${opts.originalCc}`] : []),
    `Message-ID: <${messageId}@mailroom.test>`,
    'Subject: Hello',
    '',
    'Body',
    '--arf--',
    '',
  );
}

function corpus(file: string): Buffer {
  return readFileSync(corpusPath('sisimai', 'bsd', file));
}

describe('message.delivered, per recipient', () => {
  it('announces each recipient a report confirms, once, whichever report confirms it (one DSN per destination domain)', async () => {
    const s = await send(['a@one.test', 'b@two.test', 'c@two.test']);
    clock.advance(1_500);
    expect(await handler.handle(item(s.message_id), dsn(s.message_id, [['a@one.test', 'delivered']]), log)).toBe('applied');
    clock.advance(1_000);
    const second = item(s.message_id);
    const secondDsn = dsn(s.message_id, [['b@two.test', 'delivered'], ['c@two.test', 'delivered']]);
    expect(await handler.handle(second, secondDsn, log)).toBe('applied');
    // The same report again (redelivered by the work queue): nothing more.
    expect(await handler.handle(second, secondDsn, log)).toBe('duplicate');
    // Another report about a recipient already confirmed (a second DSN from a forwarder): nothing more.
    expect(await handler.handle(item(s.message_id), dsn(s.message_id, [['a@one.test', 'delivered']]), log)).toBe('applied');

    const list = delivered(await events(s.message_id));
    expect(list.map((e) => [e.data.to_addresses, e.data.processing_time_ms])).toEqual([
      [['a@one.test'], 1_500],
      [['b@two.test', 'c@two.test'], 2_500],
    ]);
    expect(new Set(list.map((e) => e.id)).size).toBe(2);
    expect(list[0]!.data).toEqual({ message_id: s.message_id, thread_id: s.thread_id, inbox_id: s.inbox_id, to_addresses: ['a@one.test'], delivered_at: list[0]!.timestamp, processing_time_ms: 1_500 });
    expect((await repo.find(s.message_id))!.status).toBe('delivered');
  });

  it('announces a delivery that follows a bounce of another recipient; the status stays bounced', async () => {
    const s = await send(['gone@one.test', 'ok@two.test']);
    clock.advance(200);
    expect(await handler.handle(item(s.message_id), dsn(s.message_id, [['gone@one.test', 'failed']]), log)).toBe('applied');
    clock.advance(300);
    expect(await handler.handle(item(s.message_id), dsn(s.message_id, [['ok@two.test', 'delivered']]), log)).toBe('applied');
    const list = await events(s.message_id);
    expect(list.map((e) => e.type)).toEqual(['message.sent', 'message.bounced', 'message.delivered']);
    expect(delivered(list).map((e) => [e.data.to_addresses, e.data.processing_time_ms])).toEqual([[['ok@two.test'], 500]]);
    expect((await repo.find(s.message_id))!.status).toBe('bounced');
  });

  it('suppresses on a hard bounce only recipients of the message, as it was sent to them', async () => {
    const s = await send(['Moved@Three.test', 'kept@two.test']);
    await handler.handle(item(s.message_id), dsn(s.message_id, [['moved@three.test', 'failed'], ['stranger@else.test', 'failed']]), log);
    const bounced = (await events(s.message_id)).find((e) => e.type === 'message.bounced') as EnvelopeOf<'message.bounced'>;
    // The recipient in the send's spelling; a name it was not sent to is reported as named, and not suppressed.
    expect(bounced.data.bounced_recipients.map((r) => r.email_address)).toEqual(['Moved@Three.test', 'stranger@else.test']);
    expect((await suppressed()).filter((x) => x.includes(s.message_id))).toEqual([`moved@three.test hard_bounce ${s.message_id}`]);
  });

  it('reads one report that confirms one recipient and bounces another', async () => {
    const s = await send(['ok@one.test', 'gone@one.test']);
    await handler.handle(item(s.message_id), dsn(s.message_id, [['ok@one.test', 'delivered'], ['gone@one.test', 'failed']]), log);
    const list = await events(s.message_id);
    expect(list.map((e) => e.type)).toEqual(['message.sent', 'message.delivered', 'message.bounced']);
    expect(delivered(list)[0]!.data.to_addresses).toEqual(['ok@one.test']);
  });

  it('reads a report that came to a custom domain\'s bounce name (bounces.<domain>), the MAC deciding as on ours', async () => {
    const s = await send(['bounced@custom.test']);
    const custom = verp.address(s.message_id, 'bounces.example.com');
    const report = Buffer.from(dsn(s.message_id, [['bounced@custom.test', 'failed']]).toString().replace(/^To: .*$/m, `To: ${custom}`));
    const forged = custom.replace(/-[0-9a-z]{10}@/, '-aaaaaaaaaa@');
    const forgedReport = Buffer.from(report.toString().replace(custom, forged));
    expect(await handler.handle({ ...item(s.message_id), rcpt_to: [forged] }, forgedReport, log)).toBe('unattributed');
    expect(await suppressed()).not.toContain(`bounced@custom.test hard_bounce ${s.message_id}`);
    expect(await handler.handle({ ...item(s.message_id), rcpt_to: [custom] }, report, log)).toBe('applied');
    expect(await suppressed()).toContain(`bounced@custom.test hard_bounce ${s.message_id}`);
  });

  it('holds a report that arrives before the send is recorded as sent, then announces it after message.sent', async () => {
    const s = await send(['early@one.test'], { recorded: false });
    const early = item(s.message_id);
    const report = dsn(s.message_id, [['early@one.test', 'delivered']]);
    expect(await handler.handle(early, report, log)).toBe('not-sent-yet');
    expect(await events(s.message_id)).toEqual([]);
    clock.advance(100);
    await recordSent(s.message_id);
    clock.advance(400);
    // Redelivered by the work queue: applied now, not a duplicate.
    expect(await handler.handle(early, report, log)).toBe('applied');
    const list = await events(s.message_id);
    expect(list.map((e) => e.type)).toEqual(['message.sent', 'message.delivered']);
    // It arrived before the hand-over was recorded: delivered as good as at once, not before it was sent,
    // and not later by the time it waited.
    const sent = list[0] as EnvelopeOf<'message.sent'>;
    expect(delivered(list)[0]!.data).toMatchObject({ processing_time_ms: 0, delivered_at: sent.data.sent_at });
  });

  it('applies a report that waited too long for the sent record, timing it from the start of the hand-over to its arrival', async () => {
    const s = await send(['late@one.test'], { recorded: false });
    const arrived = new Date(s.created_at.getTime() + 700);
    clock.set(new Date(arrived.getTime() + SENT_WAIT_MS - 1));
    expect(await handler.handle(item(s.message_id, arrived), dsn(s.message_id, [['late@one.test', 'delivered']]), log)).toBe('not-sent-yet');
    clock.set(new Date(arrived.getTime() + SENT_WAIT_MS));
    expect(await handler.handle(item(s.message_id, arrived), dsn(s.message_id, [['late@one.test', 'delivered']]), log)).toBe('applied');
    const [event] = delivered(await events(s.message_id));
    expect(event!.data).toMatchObject({ processing_time_ms: 700, delivered_at: arrived.toISOString() });
    // The envelope is stamped when the event is made (what a recovery's window goes by), not back-dated.
    expect(event!.timestamp).toBe(clock.now().toISOString());
  });
});

describe('message.complained names only who complained', () => {
  it('names and suppresses the recipient the report names, not the others', async () => {
    const s = await send(['a@one.test', 'b@one.test', 'hidden@two.test']);
    await handler.handle(item(s.message_id), arf(s.message_id, 'abuse', { field: ['Original-Rcpt-To', 'B@one.test'], originalTo: 'a@one.test, b@one.test' }), log);
    const [event] = (await events(s.message_id)).filter((e) => e.type === 'message.complained');
    expect(event!.data).toMatchObject({ complained_recipients: ['b@one.test'], feedback_type: 'abuse' });
    expect((await suppressed()).filter((x) => x.includes(s.message_id))).toEqual([`b@one.test complaint ${s.message_id}`]);
  });

  it('names nobody and suppresses nobody when the report names no recipient of a message to several (not the original To and Cc)', async () => {
    const s = await send(['a@one.test', 'c@one.test', 'bcc@two.test']);
    await handler.handle(item(s.message_id), arf(s.message_id, 'abuse', { originalTo: 'a@one.test', originalCc: 'c@one.test' }), log);
    const [event] = (await events(s.message_id)).filter((e) => e.type === 'message.complained');
    expect(event!.data).toMatchObject({ complained_recipients: [], feedback_type: 'abuse' });
    expect((await suppressed()).filter((x) => x.includes(s.message_id))).toEqual([]);
    expect((await repo.find(s.message_id))!.status).toBe('complained');
  });

  it('does not take a redacted address for the complainant (sisimai arf-01: the original To is redacted@example.net)', async () => {
    const several = await send(['kijitora@example.jp', 'sironeko@example.jp']);
    await handler.handle(item(several.message_id), corpus('arf-01.eml'), log);
    expect((await events(several.message_id)).filter((e) => e.type === 'message.complained').map((e) => e.data)).toEqual([expect.objectContaining({ complained_recipients: [] })]);
    const single = await send(['kijitora@example.jp']);
    await handler.handle(item(single.message_id), corpus('arf-01.eml'), log);
    expect((await events(single.message_id)).filter((e) => e.type === 'message.complained').map((e) => e.data)).toEqual([expect.objectContaining({ complained_recipients: ['kijitora@example.jp'] })]);
    expect((await suppressed()).filter((x) => x.includes('example.jp') || x.includes('redacted'))).toEqual([`kijitora@example.jp complaint ${single.message_id}`]);
  });

  it('attributes a report that names nobody to the only recipient of a message to one', async () => {
    const s = await send(['solo@one.test']);
    await handler.handle(item(s.message_id), arf(s.message_id, 'abuse', { originalTo: 'solo@one.test' }), log);
    expect((await events(s.message_id)).filter((e) => e.type === 'message.complained').map((e) => e.data)).toEqual([expect.objectContaining({ complained_recipients: ['solo@one.test'] })]);
    expect(await suppressed()).toContain(`solo@one.test complaint ${s.message_id}`);
  });

  it('takes a not-spam report for no complaint: no event, no suppression, status unchanged', async () => {
    const s = await send(['fan@one.test']);
    expect(await handler.handle(item(s.message_id), arf(s.message_id, 'not-spam', { field: ['Original-Rcpt-To', 'fan@one.test'] }), log)).toBe('applied');
    expect((await events(s.message_id)).map((e) => e.type)).toEqual(['message.sent']);
    expect((await suppressed()).filter((x) => x.includes(s.message_id))).toEqual([]);
    expect((await repo.find(s.message_id))!.status).toBe('sent');
  });

  it('takes an unsubscribe for no complaint: the address is suppressed (manual, with the message), no message.complained (sisimai arf-26 Apple Mail, arf-12 ARF opt-out)', async () => {
    const apple = await send(['example@icloud.com', 'other@one.test']);
    await handler.handle(item(apple.message_id), corpus('arf-26.eml'), log);
    const optOut = await send(['user@example.com']);
    await handler.handle(item(optOut.message_id), corpus('arf-12.eml'), log);
    for (const s of [apple, optOut]) {
      expect((await events(s.message_id)).map((e) => e.type)).toEqual(['message.sent']);
      expect((await repo.find(s.message_id))!.status).toBe('sent');
    }
    expect((await suppressed()).filter((x) => x.includes(apple.message_id) || x.includes(optOut.message_id))).toEqual([`example@icloud.com manual ${apple.message_id}`, `user@example.com manual ${optOut.message_id}`]);
  });
});

describe('reports about mail from the platform itself', () => {
  /** A system mail to `to`, handed over. */
  async function systemMail(to: string): Promise<string> {
    const id = newId('systemMail');
    await systemMails.claim({ id, template: 'email_verification', to_address: to, now: clock.now() });
    await systemMails.finish(id, 'sent', clock.now(), null);
    return id;
  }
  const status = async (id: string) => (await systemMails.find(id))!.status;

  it('marks a hard-bounced mail bounced and suppresses its address for the platform, not for any customer', async () => {
    const id = await systemMail('Gone@One.test');
    const before = await suppressed();
    expect(await handler.handle(item(id), dsn(id, [['gone@one.test', 'failed']]), log)).toBe('applied');
    expect(await status(id)).toBe('bounced');
    expect(await systemMails.isSuppressed('gone@one.test')).toBe(true);
    expect(await suppressed()).toEqual(before);
    expect(await events(id)).toEqual([]);
    expect(await handler.handle(item(id), dsn(id, [['gone@one.test', 'failed']]), log)).toBe('applied');
  });

  it('applies a report once, by its id', async () => {
    const id = await systemMail('twice@one.test');
    const report = item(id);
    expect(await handler.handle(report, arf(id, 'abuse', { originalTo: 'twice@one.test' }), log)).toBe('applied');
    expect(await handler.handle(report, arf(id, 'abuse', { originalTo: 'twice@one.test' }), log)).toBe('duplicate');
    expect(await status(id)).toBe('complained');
    expect(await systemMails.isSuppressed('twice@one.test')).toBe(true);
  });

  it('changes nothing on a delivery or a not-spam report', async () => {
    const id = await systemMail('fine@one.test');
    await handler.handle(item(id), dsn(id, [['fine@one.test', 'delivered']]), log);
    await handler.handle(item(id), arf(id, 'not-spam', { field: ['Original-Rcpt-To', 'fine@one.test'] }), log);
    expect(await status(id)).toBe('sent');
    expect(await systemMails.isSuppressed('fine@one.test')).toBe(false);
  });

  it('ignores a report whose VERP address does not carry our mac for the mail', async () => {
    const id = await systemMail('forged@one.test');
    const forged = { ...item(id), rcpt_to: [verp.address(id).replace(/-[0-9a-z]{10}@/, '-aaaaaaaaaa@')] };
    // The report's own To names the same forged address.
    const report = Buffer.from(dsn(id, [['forged@one.test', 'failed']]).toString().replace(/^To: .*$/m, `To: ${forged.rcpt_to[0]}`));
    expect(await handler.handle(forged, report, log)).toBe('unattributed');
    expect(await systemMails.isSuppressed('forged@one.test')).toBe(false);
  });
});
