/**
 * Sending, as an agent would: mail arrives, the agent replies through the API, the reply
 * leaves through a real SMTP relay (the test provider), threaded, DKIM-signed with the key
 * the domain publishes, with our VERP address as envelope sender and DSNs requested; the
 * events tell what became of it. Refused sends answer with a reason and emit message.rejected.
 */
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { dkimVerify } from 'mailauth';
import { simpleParser } from 'mailparser';
import { Resolver } from 'node:dns/promises';
import type { EnvelopeOf } from '@mailroom/contracts';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { freePort, startTestRelay, waitFor, type ApiClient, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;

/** What the relay received of customers' mail: the platform's own (the verification mail of each sign-up) apart. */
const customerMail = () => relay.received.filter((m) => !m.raw.subarray(0, m.raw.indexOf('\r\n\r\n')).includes('\nX-Mailroom-Template:'));
const waitForCustomerMail = (n: number, timeoutMs: number) => waitFor(() => customerMail().length >= n && customerMail().slice(0, n), { timeoutMs, what: `${n} relayed message(s)` });

async function receive(inbox: { inbox_id: string; address: string }, from: string, subject: string, extra: Record<string, unknown> = {}) {
  const info = await nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
    .sendMail({ from, to: inbox.address, subject, text: 'Please help.', ...extra });
  return waitFor(async () => {
    const list = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data as { message_id: string; subject: string }[];
    return list.find((m) => m.subject === subject) && { ...list.find((m) => m.subject === subject)!, header: info.messageId };
  }, { timeoutMs: 20_000 });
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicB64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

// The relay sends its reports to the SMTP edge: its port is chosen first.
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({
    feedbackTo: { host: '127.0.0.1', port: smtpPort },
    hostname: 'relay.test',
    behaviour: (rcpt) => {
      const local = rcpt.split('@')[0]!;
      if (local === 'nobody') return 'reject';
      if (local === 'gone') return 'bounce';
      if (local === 'angry') return 'complain';
      if (local === 'unnamed') return 'complain-unnamed';
      if (local === 'notspam') return 'not-spam';
      if (local === 'optout') return 'opt-out';
      if (local === 'slow') return 'defer-then-bounce';
      if (local === 'spammy') return 'reject-content';
      return 'deliver';
    },
  });
});
const { api, tenant, events: tap, dns, env, signUp } = usePlatform({
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
    SEND_RATE_PER_INBOX_PER_MINUTE: '5',
  }),
  dns: [
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicB64}` },
  ],
  events: true,
});
// Once the platform has stopped.
afterAll(async () => {
  await relay?.close();
});

describe('replying', () => {
  it('sends a threaded, DKIM-signed reply through the relay and announces message.sent', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'support', display_name: 'Support Team' })).body;
    const original = await receive(inbox, 'Ada <ada@sender.test>', 'Invoice 42', { messageId: '<orig-42@sender.test>', references: '<earlier@sender.test>' });

    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'It is attached now.', html_body: '<p>It is attached now.</p>' }, { headers: { 'idempotency-key': 'reply-1' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ message_id: expect.stringMatching(/^msg_/), thread_id: expect.stringMatching(/^thr_/) });
    const stored = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}`)).body;
    expect(reply.body.thread_id).toBe(stored.thread_id);

    const [sent] = await waitForCustomerMail(1, 20_000);
    const text = sent!.raw.toString('utf8');
    expect(sent!.rcptTo).toEqual(['ada@sender.test']);
    expect(sent!.mailFrom).toMatch(new RegExp(`^bounces\\+${reply.body.message_id}-[0-9a-z]{10}@${DOMAIN.replace('.', '\\.')}$`));
    expect(sent!.dsn).toMatchObject({ ret: 'HDRS', envid: reply.body.message_id });
    expect(sent!.recipients[0]!.notify).toEqual(['SUCCESS', 'FAILURE', 'DELAY']);
    expect(text).toMatch(/^From: Support Team <support@agents\.test>\r$/m);
    expect(text).toMatch(/^To: ada@sender\.test\r$/m);
    expect(text).toMatch(/^Subject: Re: Invoice 42\r$/m);
    expect(text).toMatch(/^In-Reply-To: <orig-42@sender\.test>\r$/m);
    expect(text).toMatch(/^References: <earlier@sender\.test> <orig-42@sender\.test>\r$/m);
    expect(text).toMatch(new RegExp(`^Message-ID: <${reply.body.message_id}@agents\\.test>\\r$`, 'm'));

    // An independent verifier, against the key the domain publishes in DNS.
    const resolver = new Resolver();
    resolver.setServers([dns.servers]);
    const verdict = await dkimVerify(sent!.raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
    expect(verdict.results.map((r) => [r.signingDomain, r.status.result])).toEqual([[DOMAIN, 'pass']]);
    expect(verdict.results[0]!.canonicalization ?? 'relaxed/relaxed').toBe('relaxed/relaxed');

    const event = await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === reply.body.message_id);
    expect(event.data).toEqual({
      message_id: reply.body.message_id,
      thread_id: reply.body.thread_id,
      inbox_id: inbox.inbox_id,
      from_address: 'support@agents.test',
      to_addresses: ['ada@sender.test'],
      subject: 'Re: Invoice 42',
      provider_message_id: sent!.queueId,
      sent_at: expect.stringMatching(/Z$/),
    });

    // Same Idempotency-Key, same body: the first answer, nothing sent again.
    const again = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'It is attached now.', html_body: '<p>It is attached now.</p>' }, { headers: { 'idempotency-key': 'reply-1' } });
    expect(again.body).toEqual(reply.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const thread = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/threads/${reply.body.thread_id}`)).body;
    expect(thread.messages.map((m: { subject: string; labels: string[] }) => [m.subject, m.labels])).toEqual([
      ['Invoice 42', ['received']],
      ['Re: Invoice 42', ['sent']],
    ]);
    const raw = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${reply.body.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(sent!.raw);
    expect(customerMail()).toHaveLength(1);
  });

  it('keeps one Re: and answers the Reply-To', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'sales' })).body;
    const original = await receive(inbox, 'bob@sender.test', 'Re: Quote', { replyTo: 'orders@sender.test' });
    const before = customerMail().length;
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'Done.' });
    expect(reply.status).toBe(200);
    const messages = await waitForCustomerMail(before + 1, 20_000);
    const sent = messages[before]!;
    expect(sent.rcptTo).toEqual(['orders@sender.test']);
    expect(sent.raw.toString()).toMatch(/^Subject: Re: Quote\r$/m);
  });

  it('answers 404 for a message it cannot see: unknown, in another inbox, of another organization, or in a deleted inbox', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'lookup' })).body;
    const other = (await api.post('/api/v1/inboxes', { username: 'lookup2' })).body;
    const original = await receive(inbox, 'dan@sender.test', 'Where is it');
    const { api: stranger } = await signUp('stranger@example.com');
    const strangerInbox = (await stranger.post('/api/v1/inboxes', { username: 'lookup3' })).body;
    const before = customerMail().length;
    const unknownMessage = `msg_${'0'.repeat(26)}`;
    const cases: [ApiClient, string, string][] = [
      [api, `/api/v1/inboxes/${inbox.inbox_id}/messages/${unknownMessage}`, 'message'],
      [api, `/api/v1/inboxes/${other.inbox_id}/messages/${original.message_id}`, 'message'],
      [api, `/api/v1/inboxes/inb_${'0'.repeat(26)}/messages/${original.message_id}`, 'inbox'],
      [stranger, `/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}`, 'inbox'],
      [stranger, `/api/v1/inboxes/${strangerInbox.inbox_id}/messages/${original.message_id}`, 'message'],
    ];
    for (const [client, path, what] of cases) {
      for (const [action, body] of [['reply', { text_body: 'x' }], ['reply-all', { text_body: 'x' }], ['forward', { to: ['eve@sender.test'] }]] as const) {
        const res = await client.post(`${path}/${action}`, body);
        expect([path, action, res.status, res.body.error?.code, res.body.error?.message]).toEqual([path, action, 404, 'not_found', expect.stringContaining(what)]);
      }
    }
    expect(customerMail().length).toBe(before);
    // The control: the same reply from the right inbox is sent.
    expect((await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'x' })).status).toBe(200);
    await waitForCustomerMail(before + 1, 20_000);
    expect((await api.delete(`/api/v1/inboxes/${inbox.inbox_id}`)).status).toBe(204);
    const gone = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'x' });
    expect([gone.status, gone.body.error?.message]).toEqual([404, expect.stringContaining('inbox')]);
  });

  it('refuses a suppressed recipient, a paused inbox and a burst over the rate, each with message.rejected', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'limits' })).body;
    const original = await receive(inbox, 'carol@sender.test', 'Hello there');
    const replyPath = `/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`;

    expect((await api.post('/api/v1/suppressions', { address: 'Carol@Sender.test' })).status).toBe(201);
    const blocked = await api.post(replyPath, { text_body: 'hi' });
    expect(blocked.status).toBe(422);
    expect(blocked.body.error.code).toBe('blocked_recipient');
    const rejected = await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id);
    expect(rejected.data).toEqual({
      inbox_id: inbox.inbox_id,
      from_address: inbox.address,
      to_addresses: ['carol@sender.test'],
      subject: 'Re: Hello there',
      rejection_reason: 'blocked_recipient',
      rejection_detail: expect.stringContaining('carol@sender.test'),
      rejected_at: expect.any(String),
    });
    expect((await api.get('/api/v1/suppressions')).body.data).toEqual([expect.objectContaining({ address: 'carol@sender.test', reason: 'manual', message_id: null })]);
    expect((await api.delete('/api/v1/suppressions/carol@sender.test')).status).toBe(204);
    expect((await api.delete('/api/v1/suppressions/carol@sender.test')).status).toBe(404);

    await api.patch(`/api/v1/inboxes/${inbox.inbox_id}`, { status: 'paused' });
    const paused = await api.post(replyPath, { text_body: 'hi' });
    expect(paused.status).toBe(422);
    expect(paused.body.error.code).toBe('account_paused');
    await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id && e.data.rejection_reason === 'account_paused');
    await api.post(`/api/v1/inboxes/${inbox.inbox_id}/resume`);

    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await api.post(replyPath, { text_body: `n${i}` })).status);
    // Over the rate, with an Idempotency-Key: a 429 that says when to come back, and the same
    // key sent again is tried again (the refusal is not kept and replayed for 24 hours).
    const once = { headers: { 'idempotency-key': `over-${inbox.inbox_id}` } };
    const refused = await api.post(replyPath, { text_body: 'n6' }, once);
    statuses.push(refused.status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const again = await api.post(replyPath, { text_body: 'n6' }, once);
    expect(again.status).toBe(429);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('retry-after')).toEqual(expect.any(String));
    await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id && e.data.rejection_reason === 'rate_limited');
    // Nothing refused was stored.
    const list = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages?label=sent`)).body.data;
    expect(list).toHaveLength(5);
  });

  it('refuses every send of a paused organization until an owner resumes it', async () => {
    const owner = await signUp('paused-org@example.com');
    const inbox = (await owner.api.post('/api/v1/inboxes', { username: 'pausable' })).body;
    const message = { to: 'pat@sender.test', subject: 'While paused', text_body: 'x' };
    expect((await owner.api.patch('/api/v1/org', { status: 'paused' })).body.error.code).toBe('forbidden');
    const paused = await owner.api.patch('/api/v1/org', { status: 'paused' }, { token: owner.accessToken });
    expect([paused.status, paused.body.status]).toEqual([200, 'paused']);
    const refused = await owner.api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, message);
    expect([refused.status, refused.body.error.code]).toEqual([422, 'account_paused']);
    const rejected = await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id);
    expect(rejected.data).toMatchObject({ rejection_reason: 'account_paused', rejection_detail: expect.stringContaining('organization is paused'), subject: 'While paused' });
    expect((await owner.api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data).toEqual([]);

    expect((await owner.api.patch('/api/v1/org', {}, { token: owner.accessToken })).status).toBe(400);
    expect((await owner.api.patch('/api/v1/org', { status: 'closed' }, { token: owner.accessToken })).status).toBe(400);
    expect((await owner.api.patch('/api/v1/org', { status: 'active', name: 'Back' }, { token: owner.accessToken })).body).toMatchObject({ status: 'active', name: 'Back' });
    // The pause is trusted for at most a second after it is lifted.
    const sent = await waitFor(async () => {
      const res = await owner.api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { ...message, subject: 'Resumed' });
      return res.status === 200 && res;
    }, { timeoutMs: 5_000, intervalMs: 250 });
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === sent.body.message_id);
  });

  it('turns a recipient the relay refuses for good into message.bounced and a suppression', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'bouncy' })).body;
    const original = await receive(inbox, 'nobody@sender.test', 'From nobody');
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'hello?' });
    const bounced = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === reply.body.message_id);
    expect(bounced.data).toMatchObject({
      bounce_type: 'Permanent',
      bounce_sub_type: 'NoEmail',
      bounced_recipients: [{ email_address: 'nobody@sender.test', status: '5.1.1', diagnostic_code: expect.stringMatching(/^smtp; 550/) }],
    });
    const suppressions = (await api.get('/api/v1/suppressions')).body.data;
    expect(suppressions).toEqual(expect.arrayContaining([expect.objectContaining({ address: 'nobody@sender.test', reason: 'hard_bounce', message_id: reply.body.message_id })]));
    const next = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'again?' });
    expect(next.body.error.code).toBe('blocked_recipient');
  });
  it('turns a message the relay refuses for good into message.bounced without suppressing its recipient', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'refused' })).body;
    const original = await receive(inbox, 'spammy@sender.test', 'Content check');
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'hello' });
    const bounced = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === reply.body.message_id);
    expect(bounced.data).toMatchObject({
      bounce_type: 'Permanent',
      bounce_sub_type: 'General',
      bounced_recipients: [{ email_address: 'spammy@sender.test', status: '5.7.1', diagnostic_code: expect.stringMatching(/^smtp; 554/) }],
    });
    expect(((await api.get('/api/v1/suppressions')).body.data as { address: string }[]).some((s) => s.address === 'spammy@sender.test')).toBe(false);
  });
});

describe('what became of a message (reports over SMTP from the provider)', () => {
  async function replyTo(local: string, subject: string) {
    const inbox = (await api.post('/api/v1/inboxes', { username: `fb-${local}` })).body;
    const original = await receive(inbox, `${local}@sender.test`, subject);
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'Noted.' });
    expect(reply.status).toBe(200);
    return { inbox, reply: reply.body as { message_id: string; thread_id: string } };
  }

  it('announces message.delivered from a success DSN, with the processing time', async () => {
    const { inbox, reply } = await replyTo('happy', 'Deliver me');
    const sent = await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === reply.message_id);
    const delivered = await tap.waitFor((e): e is EnvelopeOf<'message.delivered'> => e.type === 'message.delivered' && e.data.message_id === reply.message_id, 20_000);
    expect(delivered.data).toEqual({
      message_id: reply.message_id,
      thread_id: reply.thread_id,
      inbox_id: inbox.inbox_id,
      to_addresses: ['happy@sender.test'],
      delivered_at: expect.any(String),
      processing_time_ms: Date.parse(delivered.data.delivered_at) - Date.parse((sent.data as { sent_at: string }).sent_at),
    });
  });

  it('announces a hard bounce, suppresses the address, and refuses the next send to it', async () => {
    const { inbox, reply } = await replyTo('gone', 'Bounce me');
    const bounced = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === reply.message_id, 20_000);
    expect(bounced.data).toMatchObject({
      inbox_id: inbox.inbox_id,
      thread_id: reply.thread_id,
      bounce_type: 'Permanent',
      bounce_sub_type: 'NoEmail',
      bounced_recipients: [{ email_address: 'gone@sender.test', status: '5.1.1', diagnostic_code: expect.stringContaining('550 5.1.1') }],
    });
    await waitFor(async () => ((await api.get('/api/v1/suppressions')).body.data as { address: string }[]).some((s) => s.address === 'gone@sender.test'));
    const list = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data as { message_id: string; subject: string }[];
    const original = list.find((m) => m.subject === 'Bounce me')!;
    const next = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`, { text_body: 'Still there?' });
    expect(next.status).toBe(422);
    expect(next.body.error.code).toBe('blocked_recipient');
    await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id && e.data.rejection_reason === 'blocked_recipient');
  });

  it('announces message.complained from an ARF report, without thread_id, and suppresses the address', async () => {
    const { inbox, reply } = await replyTo('angry', 'Complain about me');
    const complained = await tap.waitFor((e) => e.type === 'message.complained' && e.data.message_id === reply.message_id, 20_000);
    expect(complained.data).toEqual({
      message_id: reply.message_id,
      inbox_id: inbox.inbox_id,
      complained_recipients: ['angry@sender.test'],
      feedback_type: 'abuse',
      complained_at: expect.any(String),
    });
    await waitFor(async () => ((await api.get('/api/v1/suppressions')).body.data as { address: string; reason: string }[]).some((s) => s.address === 'angry@sender.test' && s.reason === 'complaint'));
  });

  it('waits through a delay report, then announces the bounce once', async () => {
    const { reply } = await replyTo('slow', 'Delay me');
    await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === reply.message_id, 20_000);
    await relay.waitForReports(relay.reportsSent.length, 5_000);
    expect(tap.events.filter((e) => e.type === 'message.bounced' && e.data.message_id === reply.message_id)).toHaveLength(1);
    expect(tap.events.some((e) => e.type === 'message.delivered' && e.data.message_id === reply.message_id)).toBe(false);
  });

  it('ignores a forged report to a VERP address with a wrong mac', async () => {
    const { reply } = await replyTo('victim', 'Do not forge me');
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === reply.message_id);
    const forged = `bounces+${reply.message_id}-aaaaaaaaaa@${DOMAIN}`;
    const dsn = [
      'From: MAILER-DAEMON@evil.test', `To: ${forged}`, 'Subject: Undelivered', 'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'failed', '--b',
      'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; evil.test', '', 'Final-Recipient: rfc822; victim@sender.test', 'Action: failed', 'Status: 5.1.1', '', '--b--', '',
    ].join('\r\n');
    await nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true }).sendMail({ envelope: { from: '', to: forged }, raw: dsn });
    // The genuine success DSN still arrives; the forged failure changed nothing.
    await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === reply.message_id, 20_000);
    expect(tap.events.some((e) => e.type === 'message.bounced' && e.data.message_id === reply.message_id)).toBe(false);
    expect(((await api.get('/api/v1/suppressions')).body.data as { address: string }[]).some((s) => s.address === 'victim@sender.test')).toBe(false);
  });
});

describe('what became of each recipient, and feedback that is no complaint', () => {
  let mailSend: Kysely<unknown>;
  beforeAll(() => {
    mailSend = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'mail_send', max: 1 });
  });
  afterAll(async () => {
    await mailSend?.destroy();
  });

  async function sendNew(username: string, body: { to: string[]; cc?: string[]; bcc?: string[]; subject: string }) {
    const inbox = (await api.post('/api/v1/inboxes', { username })).body;
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { ...body, text_body: 'Hello.' });
    expect(sent.status).toBe(200);
    return { inbox, message: sent.body as { message_id: string; thread_id: string } };
  }

  /** Resolves once mail-send has processed n reports about the message (each report once). */
  async function processed(messageId: string, n: number): Promise<void> {
    await waitFor(async () => (await sql<{ n: number }>`select count(*)::int as n from feedback_processed where message_id = ${messageId}`.execute(mailSend)).rows[0]!.n >= n, { timeoutMs: 20_000, what: `${n} report(s) processed` });
  }

  const deliveredOf = (id: string) => tap.events.flatMap((e) => (e.type === 'message.delivered' && e.data.message_id === id ? [e as EnvelopeOf<'message.delivered'>] : []));
  const suppressions = async () => (await api.get('/api/v1/suppressions?limit=100')).body.data as { address: string; reason: string; message_id: string | null }[];

  it('announces message.delivered for every destination’s success DSN, each naming its recipients, once', async () => {
    const { inbox, message } = await sendNew('multi', { to: ['ann@one.test', 'ben@two.test'], cc: ['cy@two.test'], subject: 'Two domains' });
    const sent = await tap.waitFor((e): e is EnvelopeOf<'message.sent'> => e.type === 'message.sent' && e.data.message_id === message.message_id, 20_000);
    await processed(message.message_id, 2);
    await waitFor(() => deliveredOf(message.message_id).length >= 2, { timeoutMs: 10_000, what: 'two message.delivered' });
    const list = deliveredOf(message.message_id);
    expect(list.map((e) => e.data.to_addresses).sort()).toEqual([['ann@one.test'], ['ben@two.test', 'cy@two.test']]);
    for (const e of list) {
      expect(e.data).toMatchObject({ thread_id: message.thread_id, inbox_id: inbox.inbox_id });
      expect(e.data.processing_time_ms).toBe(Date.parse(e.data.delivered_at) - Date.parse(sent.data.sent_at));
    }
    // Never before message.sent.
    expect(tap.events.findIndex((e) => e.id === sent.id)).toBeLessThan(Math.min(...list.map((d) => tap.events.findIndex((e) => e.id === d.id))));
    // Later events are out: a duplicate would be too.
    const later = await sendNew('multi-later', { to: ['dot@one.test'], subject: 'Later' });
    await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === later.message.message_id, 20_000);
    expect(deliveredOf(message.message_id)).toHaveLength(2);
  });

  it('announces a delivery after another recipient’s bounce', async () => {
    const { message } = await sendNew('mixed', { to: ['gone@first.test', 'fine@second.test'], subject: 'Bounce then deliver' });
    const bounced = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === message.message_id, 20_000);
    expect(bounced.data).toMatchObject({ bounced_recipients: [expect.objectContaining({ email_address: 'gone@first.test' })] });
    await processed(message.message_id, 2);
    const delivered = await tap.waitFor((e): e is EnvelopeOf<'message.delivered'> => e.type === 'message.delivered' && e.data.message_id === message.message_id, 10_000);
    expect(delivered.data.to_addresses).toEqual(['fine@second.test']);
  });

  it('names nobody and suppresses nobody for a complaint that names no recipient of a message to several', async () => {
    const { message } = await sendNew('unnamed', { to: ['unnamed@sender.test'], cc: ['bystander@sender.test'], bcc: ['auditor@sender.test'], subject: 'Who complained' });
    const complained = await tap.waitFor((e) => e.type === 'message.complained' && e.data.message_id === message.message_id, 20_000);
    expect(complained.data).toMatchObject({ complained_recipients: [], feedback_type: 'abuse' });
    const mine = (await suppressions()).filter((s) => s.message_id === message.message_id);
    expect(mine).toEqual([]);
  });

  it('names and suppresses the only recipient of a message to one, when the complaint names nobody', async () => {
    const { message } = await sendNew('unnamed-solo', { to: ['unnamed@solo.test'], subject: 'Only you' });
    const complained = await tap.waitFor((e) => e.type === 'message.complained' && e.data.message_id === message.message_id, 20_000);
    expect(complained.data).toMatchObject({ complained_recipients: ['unnamed@solo.test'] });
    await waitFor(async () => (await suppressions()).some((s) => s.address === 'unnamed@solo.test' && s.reason === 'complaint'));
  });

  it('takes a not-spam report for no complaint, and an opt-out for an unsubscribe that suppresses without message.complained', async () => {
    const notSpam = await sendNew('notspam', { to: ['notspam@sender.test'], subject: 'Not spam' });
    const optOut = await sendNew('optout', { to: ['optout@sender.test'], subject: 'Opt out' });
    // Each: a success DSN, then the feedback report.
    await processed(notSpam.message.message_id, 2);
    await processed(optOut.message.message_id, 2);
    await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === optOut.message.message_id, 10_000);
    await tap.waitFor((e) => e.type === 'message.delivered' && e.data.message_id === notSpam.message.message_id, 10_000);
    // mail-send publishes its events in order: once a later one is out, a complaint would be too.
    const later = await sendNew('feedback-later', { to: ['later@sender.test'], subject: 'Later' });
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === later.message.message_id, 20_000);
    const ids = [notSpam.message.message_id, optOut.message.message_id];
    expect(tap.events.filter((e) => e.type === 'message.complained' && ids.includes(e.data.message_id))).toEqual([]);
    const list = await suppressions();
    expect(list.filter((s) => s.address === 'notspam@sender.test')).toEqual([]);
    expect(list.filter((s) => s.address === 'optout@sender.test')).toEqual([expect.objectContaining({ reason: 'manual', message_id: optOut.message.message_id })]);
  });
});

describe('new messages, reply-all and forward', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(3000, 7)]);

  it('sends a new message with Cc, Bcc, attachments and custom headers, in a new thread', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'outreach', display_name: 'Outreach' })).body;
    const before = customerMail().length;
    const body = {
      to: ['Pat@Sender.test', 'pat@sender.test'],
      cc: 'quinn@sender.test',
      bcc: ['audit@sender.test', 'quinn@sender.test'],
      subject: 'Your report',
      text_body: 'Attached.',
      html_body: '<p>Attached.</p>',
      attachments: [{ filename: 'report.pdf', content_type: 'application/pdf', content_base64: pdf.toString('base64') }, { filename: 'notes.txt', content_base64: Buffer.from('n').toString('base64') }, { filename: 'data', content_base64: Buffer.from('n').toString('base64') }],
      headers: { 'X-Campaign': 'spring' },
    };
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, body, { headers: { 'idempotency-key': 'send-1' } });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ message_id: expect.stringMatching(/^msg_/), thread_id: expect.stringMatching(/^thr_/) });

    const out = (await waitForCustomerMail(before + 1, 20_000))[before]!;
    expect(out.rcptTo).toEqual(['pat@sender.test', 'quinn@sender.test', 'audit@sender.test']);
    const parsed = await simpleParser(out.raw);
    expect(parsed.from?.value).toEqual([{ name: 'Outreach', address: 'outreach@agents.test' }]);
    expect(parsed.to).toMatchObject({ text: 'pat@sender.test' });
    expect(parsed.cc).toMatchObject({ text: 'quinn@sender.test' });
    expect(parsed.headers.has('bcc')).toBe(false);
    expect(parsed.headers.get('x-campaign')).toBe('spring');
    expect(parsed.inReplyTo).toBeUndefined();
    expect(parsed.text?.trim()).toBe('Attached.');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.equals(a.filename === 'report.pdf' ? pdf : Buffer.from('n'))])).toEqual([
      ['report.pdf', 'application/pdf', true],
      ['notes.txt', 'text/plain', true],
      ['data', 'application/octet-stream', true],
    ]);
    const resolver = new Resolver();
    resolver.setServers([dns.servers]);
    const verdict = await dkimVerify(out.raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
    expect(verdict.results.map((r) => r.status.result)).toEqual(['pass']);

    const stored = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${sent.body.message_id}`)).body;
    expect(stored).toMatchObject({ thread_id: sent.body.thread_id, subject: 'Your report', to_addresses: ['pat@sender.test'], cc_addresses: ['quinn@sender.test'], labels: ['sent'] });
    expect(stored.attachments.map((a: { filename: string; size: number }) => [a.filename, a.size])).toEqual([['report.pdf', pdf.length], ['notes.txt', 1], ['data', 1]]);
    const download = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${sent.body.message_id}/attachments/${stored.attachments[0].attachment_id}`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === sent.body.message_id);

    const replayed = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, body, { headers: { 'idempotency-key': 'send-1' } });
    expect(replayed.body).toEqual(sent.body);
    const conflict = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { ...body, subject: 'Other' }, { headers: { 'idempotency-key': 'send-1' } });
    expect(conflict.status).toBe(409);
    expect(customerMail().filter((m) => m.raw.includes('Subject: Your report'))).toHaveLength(1);
  });

  it('checks a new message up front: recipients, size, body, headers', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'strict' })).body;
    const path = `/api/v1/inboxes/${inbox.inbox_id}/messages/send`;
    const base = { to: 'pat@sender.test', subject: 'Hi', text_body: 'x' };
    const many = Array.from({ length: 30 }, (_, i) => `r${i}@sender.test`);
    const tooMany = await api.post(path, { ...base, to: many, cc: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(tooMany.body.error)).toContain('at most 50 recipients');
    const big = await api.post(path, { ...base, attachments: [{ filename: 'big.bin', content_base64: Buffer.alloc(600 * 1024).toString('base64') }] });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    // Within the gateway's body limit, beyond what one bus message carries: 413 as well, not 503.
    const huge = await api.post(path, { ...base, text_body: 'a'.repeat(510 * 1024), html_body: 'b'.repeat(510 * 1024) });
    expect([huge.status, huge.body.error.code]).toEqual([413, 'payload_too_large']);
    for (const bad of [
      { ...base, text_body: undefined },
      { ...base, to: [] },
      { ...base, to: 'not-an-address' },
      { ...base, subject: 'two\r\nBcc: victim@sender.test' },
      { ...base, headers: { Bcc: 'victim@sender.test' } },
      { ...base, headers: { 'X-Ok': 'a\r\nBcc: victim@sender.test' } },
      { ...base, attachments: [{ filename: '../etc/passwd', content_base64: 'AA==' }] },
      { ...base, attachments: [{ filename: 'a.txt', content_base64: 'not base64!' }] },
      { ...base, from: 'someone@else.test' },
      // NUL can be neither mail text nor stored text.
      { ...base, subject: 'a\u0000b' },
      { ...base, text_body: 'a\u0000b' },
      { ...base, html_body: '<p>a\u0000b</p>' },
      { ...base, headers: { 'X-Ok': 'a\u0000b' } },
      { ...base, attachments: [{ filename: 'a\u0000.txt', content_base64: 'AA==' }] },
    ]) {
      const res = await api.post(path, bad);
      expect([JSON.stringify(bad), res.status, res.body.error?.code]).toEqual([JSON.stringify(bad), 400, 'invalid_request']);
    }
    expect((await api.post(`/api/v1/inboxes/inb_${'0'.repeat(26)}/messages/send`, base)).status).toBe(404);
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data).toEqual([]);
  });

  it('replies to everyone: the sender in To, the other recipients in Cc, never the inbox itself', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'team' })).body;
    const original = await receive(inbox, 'Ada <ada@sender.test>', 'Planning', { to: [inbox.address.toUpperCase(), 'bob@sender.test'], cc: ['carol@sender.test', 'ada@sender.test'], messageId: '<plan-1@sender.test>' });
    const before = customerMail().length;
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply-all`, { text_body: 'Agreed.' });
    expect(reply.status).toBe(200);
    const out = (await waitForCustomerMail(before + 1, 20_000))[before]!;
    expect(out.rcptTo).toEqual(['ada@sender.test', 'bob@sender.test', 'carol@sender.test']);
    const parsed = await simpleParser(out.raw);
    expect(parsed.to).toMatchObject({ text: 'ada@sender.test' });
    expect(parsed.cc).toMatchObject({ text: 'bob@sender.test, carol@sender.test' });
    expect(parsed.subject).toBe('Re: Planning');
    expect(parsed.inReplyTo).toBe('<plan-1@sender.test>');
    const stored = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${reply.body.message_id}`)).body;
    expect(stored).toMatchObject({ to_addresses: ['ada@sender.test'], cc_addresses: ['bob@sender.test', 'carol@sender.test'] });
  });

  it('forwards a message with its attachments, in the same thread', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'desk' })).body;
    const original = await receive(inbox, 'Ada <ada@sender.test>', 'Contract', { text: 'Please sign.', attachments: [{ filename: 'contract.pdf', content: pdf, contentType: 'application/pdf' }] });
    const before = customerMail().length;
    const fwd = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/forward`, { to: 'legal@sender.test', text_body: 'For review.' }, { headers: { 'idempotency-key': 'fwd-1' } });
    expect(fwd.status).toBe(200);
    const out = (await waitForCustomerMail(before + 1, 20_000))[before]!;
    expect(out.rcptTo).toEqual(['legal@sender.test']);
    const parsed = await simpleParser(out.raw);
    expect(parsed.subject).toBe('Fwd: Contract');
    expect(parsed.text).toContain('For review.');
    expect(parsed.text).toContain('---------- Forwarded message ---------');
    expect(parsed.text).toContain('From: Ada <ada@sender.test>');
    expect(parsed.text).toContain('Please sign.');
    expect(parsed.attachments.map((a) => [a.filename, a.content.equals(pdf)])).toEqual([['contract.pdf', true]]);
    const orig = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}`)).body;
    expect(fwd.body.thread_id).toBe(orig.thread_id);
    const again = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/forward`, { to: 'legal@sender.test', text_body: 'For review.' }, { headers: { 'idempotency-key': 'fwd-1' } });
    expect(again.body).toEqual(fwd.body);
    expect((await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/forward`, { text_body: 'no one' })).status).toBe(400);
    for (const [action, body] of [
      ['forward', { to: 'pat@sender.test', text_body: 'a\u0000b' }],
      ['reply', { text_body: 'a\u0000b' }],
      ['reply-all', { text_body: 'ok', html_body: 'a\u0000b' }],
    ] as const) {
      const res = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/${action}`, body);
      expect([action, res.status, JSON.stringify(res.body.error)]).toEqual([action, 400, expect.stringContaining('NUL')]);
    }
    // An HTML-only reply (an empty text_body, as /send allows); no content at all is a 400.
    const replyPath = `/api/v1/inboxes/${inbox.inbox_id}/messages/${original.message_id}/reply`;
    const htmlOnly = await api.post(replyPath, { text_body: '', html_body: '<p>Signed and sent back.</p>' });
    expect(htmlOnly.status).toBe(200);
    const sent = (await waitForCustomerMail(before + 2, 20_000))[before + 1]!;
    expect((await simpleParser(sent.raw)).html).toContain('<p>Signed and sent back.</p>');
    const empty = await api.post(replyPath, { text_body: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toEqual([expect.objectContaining({ path: 'body.text_body' })]);
  });
});

describe('mail larger than the bus takes in one message', () => {
  it('announces it with its text cut to fit, reads it whole, refuses to forward it whole (413), and everything after it flows', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'bulky' })).body;
    // 1.2 MB of plain text: more than NATS carries in one message (1 MB).
    const line = 'The quick brown fox jumps over the lazy dog, again and again.\n';
    const text = line.repeat(Math.ceil(1_200_000 / line.length));
    const big = await receive(inbox, 'Ada <ada@sender.test>', 'Large report', { text });
    const announced = await tap.waitFor((e) => e.type === 'message.received' && e.data.message_id === big.message_id);
    expect(announced.type === 'message.received' && text.startsWith(announced.data.extracted_text.trimEnd().slice(0, 1000))).toBe(true);
    expect(Buffer.byteLength(tap.raw[tap.events.indexOf(announced)]!)).toBeLessThanOrEqual(1024 * 1024);
    // Read through the API, whole: a reply larger than one NATS message goes through the object store.
    const stored = await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${big.message_id}`);
    expect(stored.status).toBe(200);
    expect(stored.body.text_body.length).toBeGreaterThanOrEqual(text.length - 2);
    expect(stored.body.text_body.slice(0, line.length)).toBe(line);

    // Forwarded whole, it would be a work item the bus cannot carry: refused, nothing stored,
    // and not counted against the inbox's rate (5 a minute here: five refusals leave the reply below its room).
    for (let i = 0; i < 5; i++) {
      const fwd = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${big.message_id}/forward`, { to: 'legal@sender.test' });
      expect(fwd.status).toBe(413);
      expect(fwd.body.error.code).toBe('payload_too_large');
    }

    // What comes after goes through: another message announced, a reply sent.
    const next = await receive(inbox, 'Ada <ada@sender.test>', 'Small follow-up');
    await tap.waitFor((e) => e.type === 'message.received' && e.data.message_id === next.message_id);
    const before = customerMail().length;
    expect((await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${next.message_id}/reply`, { text_body: 'Got both.' })).status).toBe(200);
    const out = (await waitForCustomerMail(before + 1, 20_000))[before]!;
    expect((await simpleParser(out.raw)).text).toContain('Got both.');
  }, 60_000);
});
