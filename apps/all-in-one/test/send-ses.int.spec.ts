/**
 * Sending through Amazon SES, against a fake SES API and SNS on loopback (real HTTP, real
 * signatures): the SESv2 raw send carries our signed bytes, every envelope recipient and our
 * message tag; what became of the message comes back as SNS notifications to the gateway's
 * provider endpoint, checked (signature, topic) and applied once. A complaint about the
 * platform's own mail stops the platform mailing the address.
 */
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { simpleParser } from 'mailparser';
import type { EnvelopeOf } from '@mailroom/contracts';
import { createDb, sql } from '@mailroom/db';
import { freePort, startFakeSes, waitFor, type FakeSes, type SesBehaviour } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let ses: FakeSes;
let smtpPort: number;

const BEHAVIOURS: Record<string, SesBehaviour> = { gone: 'bounce', full: 'soft-bounce', listed: 'suppressed', angry: 'complain', notspam: 'not-spam', busy: 'throttle-once', spammy: 'reject-content' };

beforeAll(async () => {
  ses = await startFakeSes({ behaviour: (rcpt) => BEHAVIOURS[rcpt.split('@')[0]!] ?? 'deliver' });
  smtpPort = await freePort();
});
const mailroom = usePlatform({
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    MAIL_PROVIDER: 'ses',
    SES_REGION: 'us-east-1',
    SES_ENDPOINT: ses.url,
    SES_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    SES_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    SES_CONFIGURATION_SET: 'mailroom',
    SES_SNS_TOPIC_ARNS: ses.topicArn,
    SNS_TRUSTED_URL_PREFIX: ses.snsPrefix,
    DKIM_PRIVATE_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  }),
  dns: [{ name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' }],
  events: true,
});
const { api, anon, tenant, events: tap } = mailroom;
beforeAll(() => {
  // Subscribed with a query, as an operator may: a provider's callback takes the URL as it was subscribed.
  ses.notifyTo(`${mailroom.url}/api/v1/providers/ses/notifications?subscription=mailroom-test`);
});
// Once the platform has stopped.
afterAll(async () => {
  await ses?.close();
});

async function replyTo(local: string, subject: string) {
  const inbox = (await api.post('/api/v1/inboxes', { username: `ses-${local}` })).body;
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
    .sendMail({ from: `${local}@sender.test`, to: inbox.address, subject, text: 'Hello.' });
  const original = await waitFor(async () => ((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data as { message_id: string; subject: string }[]).find((m) => m.subject === subject), { timeoutMs: 20_000 });
  const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'Noted.' });
  expect(reply.status).toBe(200);
  return { inbox, reply: reply.body as { message_id: string; thread_id: string } };
}

describe('SES', () => {
  it('confirms the SNS subscription by fetching its SubscribeURL', async () => {
    expect(await ses.subscribe()).toBe(204);
    expect(ses.confirmations).toHaveLength(1);
  });

  it('sends the signed bytes with every recipient and our tag; message.sent carries SES’s id, message.delivered follows once', async () => {
    const { inbox, reply } = await replyTo('happy', 'Via SES');
    const sent = await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === reply.message_id, 20_000);
    const out = ses.sent.find((s) => s.tags.mailroom_message_id === reply.message_id)!;
    expect(out).toMatchObject({ to: ['happy@sender.test'], configurationSet: 'mailroom' });
    expect(sent.data).toMatchObject({ provider_message_id: out.messageId, inbox_id: inbox.inbox_id });
    const parsed = await simpleParser(out.raw);
    expect(parsed.subject).toBe('Re: Via SES');
    expect(parsed.headers.get('dkim-signature')).toMatchObject({ params: expect.objectContaining({ d: DOMAIN }) });

    const delivered = await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === reply.message_id, 20_000);
    expect(delivered.data).toMatchObject({ to_addresses: ['happy@sender.test'], thread_id: reply.thread_id });
    // SNS delivers again: applied once.
    const post = ses.posts.find((p) => p.body.includes(out.messageId) && p.body.includes('Delivery'))!;
    const again = await fetch(`${mailroom.url}/api/v1/providers/ses/notifications`, { method: 'POST', body: post.body, headers: { 'content-type': 'text/plain; charset=UTF-8' } });
    expect(again.status).toBe(204);
    const raw = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${reply.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(Buffer.from(await raw.arrayBuffer()).equals(out.raw)).toBe(true);
    // mail-send publishes its events in order: once a later one is out, a duplicate would be too.
    const later = await replyTo('later', 'Via SES again');
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === later.reply.message_id, 20_000);
    expect(tap.events.filter((e) => e.type === 'message.delivered' && e.data.message_id === reply.message_id)).toHaveLength(1);
  });

  it('turns bounces and complaints into events; hard bounces and complaints suppress the address', async () => {
    const gone = await replyTo('gone', 'SES hard');
    const listed = await replyTo('listed', 'SES listed');
    const full = await replyTo('full', 'SES soft');
    const angry = await replyTo('angry', 'SES complaint');
    const hard = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === gone.reply.message_id, 20_000);
    expect(hard.data).toMatchObject({ bounce_type: 'Permanent', bounce_sub_type: 'General', bounced_recipients: [{ email_address: 'gone@sender.test', status: '5.1.1', diagnostic_code: 'smtp; 550 5.1.1 user unknown' }] });
    const onList = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === listed.reply.message_id, 20_000);
    expect(onList.data).toMatchObject({ bounce_type: 'Permanent', bounce_sub_type: 'Suppressed', bounced_recipients: [{ email_address: 'listed@sender.test', status: '5.0.0' }] });
    const soft = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === full.reply.message_id, 20_000);
    expect(soft.data).toMatchObject({ bounce_type: 'Transient', bounce_sub_type: 'General', bounced_recipients: [{ email_address: 'full@sender.test', status: '4.2.2' }] });
    const complained = await tap.waitFor((e) => e.type === 'message.complained' && e.data.message_id === angry.reply.message_id, 20_000);
    expect(complained.data).toMatchObject({ complained_recipients: ['angry@sender.test'], feedback_type: 'abuse', inbox_id: angry.inbox.inbox_id });
    const suppressed = await waitFor(async () => {
      const list = ((await api.get('/api/v1/suppressions')).body.data as { address: string; reason: string }[]).map((s) => `${s.address} ${s.reason}`).sort();
      return list.length >= 3 && list;
    });
    expect(suppressed).toEqual(['angry@sender.test complaint', 'gone@sender.test hard_bounce', 'listed@sender.test hard_bounce']);
  });

  it('retries a throttled send; a message SES refuses bounces without suppressing its recipient', async () => {
    const busy = await replyTo('busy', 'SES throttled');
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === busy.reply.message_id, 20_000);
    const spammy = await replyTo('spammy', 'SES refused');
    const bounced = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === spammy.reply.message_id, 20_000);
    expect(bounced.data).toMatchObject({ bounce_type: 'Permanent', bounce_sub_type: 'General', bounced_recipients: [{ email_address: 'spammy@sender.test', diagnostic_code: expect.stringContaining('MessageRejected') }] });
    expect(((await api.get('/api/v1/suppressions')).body.data as { address: string }[]).some((s) => s.address === 'spammy@sender.test')).toBe(false);
  });

  async function sendNew(username: string, to: string[], subject: string) {
    const inbox = (await api.post('/api/v1/inboxes', { username })).body;
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to, subject, text_body: 'Hello.' });
    expect(sent.status).toBe(200);
    return sent.body as { message_id: string; thread_id: string };
  }
  const deliveredOf = (id: string) => tap.events.flatMap((e) => (e.type === 'message.delivered' && e.data.message_id === id ? [e as EnvelopeOf<'message.delivered'>] : []));
  /** Resolves once every notification about the SES message was answered (a 2xx or 4xx ends SNS's retries). */
  const answered = (sesId: string, n: number) =>
    waitFor(() => {
      const posts = ses.posts.filter((p) => p.body.includes(sesId));
      return posts.length >= n && posts.every((p) => p.statuses.length > 0 && p.statuses.at(-1)! < 500) && posts;
    }, { timeoutMs: 20_000, what: `${n} notification(s) answered` });

  it('announces message.delivered for each recipient’s Delivery notification, once each', async () => {
    const message = await sendNew('ses-multi', ['ann@one.test', 'ben@two.test'], 'SES two');
    const sent = await tap.waitFor((e): e is EnvelopeOf<'message.sent'> => e.type === 'message.sent' && e.data.message_id === message.message_id, 20_000);
    await answered(sent.data.provider_message_id, 2);
    await waitFor(() => deliveredOf(message.message_id).length >= 2, { timeoutMs: 10_000, what: 'two message.delivered' });
    expect(deliveredOf(message.message_id).map((e) => e.data.to_addresses).sort()).toEqual([['ann@one.test'], ['ben@two.test']]);
    for (const e of deliveredOf(message.message_id)) expect(e.data.processing_time_ms).toBe(Math.max(0, Date.parse(e.data.delivered_at) - Date.parse(sent.data.sent_at)));
  });

  it('announces a delivery after another recipient’s bounce', async () => {
    const message = await sendNew('ses-mixed', ['gone@first.test', 'fine@second.test'], 'SES bounce then deliver');
    const sent = await tap.waitFor((e): e is EnvelopeOf<'message.sent'> => e.type === 'message.sent' && e.data.message_id === message.message_id, 20_000);
    const posts = await answered(sent.data.provider_message_id, 2);
    expect(posts.map((p) => JSON.parse((JSON.parse(p.body) as { Message: string }).Message).eventType)).toEqual(['Bounce', 'Delivery']);
    await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === message.message_id, 10_000);
    const delivered = await tap.waitFor((e): e is EnvelopeOf<'message.delivered'> => e.type === 'message.delivered' && e.data.message_id === message.message_id, 10_000);
    expect(delivered.data.to_addresses).toEqual(['fine@second.test']);
  });

  it('takes a not-spam Complaint for no complaint: no message.complained, no suppression', async () => {
    const message = await sendNew('ses-notspam', ['notspam@sender.test'], 'SES not spam');
    const sent = await tap.waitFor((e): e is EnvelopeOf<'message.sent'> => e.type === 'message.sent' && e.data.message_id === message.message_id, 20_000);
    await answered(sent.data.provider_message_id, 2);
    await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === message.message_id, 10_000);
    // mail-send publishes its events in order: once a later one is out, a complaint would be too.
    const later = await sendNew('ses-notspam-later', ['later@sender.test'], 'SES later');
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === later.message_id, 20_000);
    expect(tap.events.filter((e) => e.type === 'message.complained' && e.data.message_id === message.message_id)).toEqual([]);
    expect(((await api.get('/api/v1/suppressions')).body.data as { address: string }[]).some((s) => s.address === 'notspam@sender.test')).toBe(false);
  });

  it('finds the message by SES’s id when notifications carry no tags (identity notifications)', async () => {
    ses.setEventPublishing(false);
    try {
      const { reply } = await replyTo('plain', 'SES identity');
      await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === reply.message_id, 20_000);
    } finally {
      ses.setEventPublishing(true);
    }
  });

  it('refuses notifications of another topic, with a broken signature, or from an untrusted certificate', async () => {
    const before = tap.events.length;
    const endpoint = `${mailroom.url}/api/v1/providers/ses/notifications`;
    const fields = { Type: 'Notification', MessageId: 'f0000000-0000-4000-8000-000000000000', Message: '{"eventType":"Bounce"}', Timestamp: new Date().toISOString() };
    expect(await ses.post({ ...fields, TopicArn: 'arn:aws:sns:us-east-1:999999999999:someone-else' })).toBe(403);
    expect(await ses.post({ ...fields, TopicArn: ses.topicArn }, { corrupt: true })).toBe(403);
    const foreign = { ...ses.sign({ ...fields, TopicArn: ses.topicArn }), SigningCertURL: 'https://evil.test/cert.pem' };
    const res = await fetch(endpoint, { method: 'POST', body: JSON.stringify(foreign) });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    const junk = await fetch(endpoint, { method: 'POST', body: 'hello' });
    expect([junk.status, ((await junk.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_request']);
    expect(tap.events.slice(before).filter((e) => e.type.startsWith('message.'))).toEqual([]);
  });

  it('asks SNS to deliver again a notification about a message not known yet, and drops it once it is old', async () => {
    const about = (timestamp: string) => ({
      Type: 'Notification',
      TopicArn: ses.topicArn,
      MessageId: `a${timestamp.replace(/\D/g, '')}-0000-4000-8000-000000000000`,
      Timestamp: new Date().toISOString(),
      Message: JSON.stringify({ eventType: 'Delivery', mail: { messageId: 'never-sent-by-us', timestamp }, delivery: { recipients: ['x@sender.test'] } }),
    });
    const fresh = await ses.post(about(new Date().toISOString()));
    expect(fresh).toBe(503);
    expect(ses.posts.at(-1)!.statuses.length).toBeGreaterThan(1);
    expect(await ses.post(about(new Date(Date.now() - 3_600_000).toISOString()))).toBe(204);
  });
});

describe('SES and the platform’s own mail', () => {
  async function statuses(to: string): Promise<string[]> {
    const db = createDb<unknown>({ url: mailroom.env.DATABASE_URL!, schema: 'public', max: 1 });
    try {
      return (await sql<{ template: string; status: string }>`select template, status from mail_send.system_mails where to_address = ${to} order by created_at`.execute(db)).rows.map((r) => `${r.template} ${r.status}`);
    } finally {
      await db.destroy();
    }
  }

  it('takes a complaint about a verification mail (found by its tag) as the end of platform mail to the address', async () => {
    const email = `angry@platform-${Date.now()}.example`;
    expect((await anon.post('/api/v1/auth/signup', { email, password: 'correct horse battery' })).status).toBe(201);
    const mail = await waitFor(() => ses.sent.find((s) => s.to.includes(email)), { timeoutMs: 20_000, what: 'the verification mail sent through SES' });
    expect(mail.tags).toEqual(expect.objectContaining({ mailroom_message_id: expect.stringMatching(/^sml_/) }));
    await waitFor(async () => (await statuses(email)).join() === 'email_verification complained', { timeoutMs: 20_000, what: 'the complaint applied' });
    expect((await anon.post('/api/v1/auth/password/reset-request', { email })).status).toBe(202);
    await waitFor(async () => (await statuses(email)).join() === 'email_verification complained,password_reset suppressed', { timeoutMs: 20_000, what: 'the reset mail suppressed' });
    expect(ses.sent.filter((s) => s.to.includes(email))).toHaveLength(1);
  });
});
