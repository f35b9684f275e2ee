/**
 * Receiving mail, as a user and a sender on the internet would: inboxes through the API,
 * real SMTP into the edge (nodemailer, and raw sockets for what no library sends), real
 * rspamd, a DNS server on loopback for SPF/DKIM/DMARC, messages read back through the API
 * and events read back from the stream.
 */
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { ApiClient, RawSmtp, corpusPath, waitFor } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const mailroom = usePlatform({
  env: { MAIL_DOMAIN: DOMAIN, SMTP_HOSTNAME: 'mx.agents.test', SMTP_MAX_MESSAGE_BYTES: String(200 * 1024), SMTP_INLINE_RAW_MAX_BYTES: String(16 * 1024) },
  dns: [
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
    { name: 'forged.test', type: 'TXT', text: 'v=spf1 ip4:192.0.2.1 -all' },
    { name: '_dmarc.forged.test', type: 'TXT', text: 'v=DMARC1; p=reject' },
  ],
  events: true,
});
const { api, tenant, events: tap } = mailroom;
let counter = 0;

async function newInbox(username = `box${++counter}`, client = api): Promise<{ inbox_id: string; address: string }> {
  const res = await client.post('/api/v1/inboxes', { username, display_name: 'Support' });
  expect(res.status).toBe(201);
  return res.body;
}

function transport() {
  return nodemailer.createTransport({ host: '127.0.0.1', port: mailroom.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test', tls: { rejectUnauthorized: false } });
}

async function messagesOf(inboxId: string, min = 1): Promise<any[]> {
  return waitFor(async () => {
    const res = await api.get(`/api/v1/inboxes/${inboxId}/messages`);
    return res.status === 200 && res.body.data.length >= min && res.body.data;
  }, { timeoutMs: 20_000, what: `${min} message(s) in ${inboxId}` });
}

/** One SMTP transaction over a raw socket; returns the reply to the end of DATA. */
async function rawTransaction(rcpt: string, data: string | Buffer): Promise<{ conn: RawSmtp; reply: { code: number; text: string } }> {
  const conn = await RawSmtp.connect(mailroom.smtpPort);
  expect((await conn.reply()).code).toBe(220);
  expect((await conn.command('EHLO mail.sender.test')).code).toBe(250);
  expect((await conn.command('MAIL FROM:<ada@sender.test>')).code).toBe(250);
  expect((await conn.command(`RCPT TO:<${rcpt}>`)).code).toBe(250);
  expect((await conn.command('DATA')).code).toBe(354);
  await conn.write(data);
  return { conn, reply: await conn.reply() };
}

describe('inboxes', () => {
  it('creates, reads, pauses, resumes, lists and deletes, scoped to the tenant', async () => {
    const created = await api.post('/api/v1/inboxes', { username: 'Sales.Team', display_name: 'Sales' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ address: `sales.team@${DOMAIN}`, display_name: 'Sales', status: 'active' });
    expect(created.body.inbox_id).toMatch(/^inb_/);
    const generated = await api.post('/api/v1/inboxes', {});
    expect(generated.body.address).toMatch(new RegExp(`^agent-[0-9a-z]{10}@${DOMAIN.replace('.', '\\.')}$`));

    expect((await api.post('/api/v1/inboxes', { username: 'SALES.team' })).status).toBe(409);
    expect((await api.post('/api/v1/inboxes', { username: 'x', domain: 'elsewhere.com' })).status).toBe(422);
    for (const bad of ['.dot', 'a..b', 'with space', 'ünï', 'x'.repeat(65)]) {
      expect((await api.post('/api/v1/inboxes', { username: bad })).status).toBe(400);
    }

    const id = created.body.inbox_id;
    const paused = await api.patch(`/api/v1/inboxes/${id}`, { status: 'paused' });
    expect(paused.body.status).toBe('paused');
    expect((await api.post(`/api/v1/inboxes/${id}/resume`)).body.status).toBe('active');
    expect((await api.patch(`/api/v1/inboxes/${id}`, { display_name: null })).body.display_name).toBeNull();
    expect((await api.patch(`/api/v1/inboxes/${id}`, { status: 'deleted' })).status).toBe(400);

    const other = new ApiClient(api.baseUrl);
    const stranger = await other.post('/api/v1/auth/signup', { email: 'stranger@example.com', password: 'correct horse battery' });
    const strangerApi = other.withToken(stranger.body.access_token);
    expect((await strangerApi.get(`/api/v1/inboxes/${id}`)).status).toBe(404);
    expect((await strangerApi.delete(`/api/v1/inboxes/${id}`)).status).toBe(404);
    expect((await strangerApi.get('/api/v1/inboxes')).body.data).toEqual([]);

    const page = await api.get('/api/v1/inboxes?limit=1');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.next_page_token).toEqual(expect.any(String));

    expect((await api.delete(`/api/v1/inboxes/${id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/inboxes/${id}`)).status).toBe(404);
    // The address is free again, and mail to the deleted inbox is refused (below).
    expect((await api.post('/api/v1/inboxes', { username: 'sales.team' })).status).toBe(201);
  });
});

describe('message and thread lists', () => {
  it('are a 404 for an inbox of another tenant, and for a deleted inbox', async () => {
    const inbox = await newInbox();
    await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Listed', text: 'hello' });
    await messagesOf(inbox.inbox_id);
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/threads`)).body.data).toHaveLength(1);

    const other = await api.post('/api/v1/auth/signup', { email: 'lister@example.com', password: 'correct horse battery' });
    const stranger = new ApiClient(api.baseUrl).withToken(other.body.access_token);
    for (const list of ['messages', 'threads']) {
      const res = await stranger.get(`/api/v1/inboxes/${inbox.inbox_id}/${list}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }

    expect((await api.delete(`/api/v1/inboxes/${inbox.inbox_id}`)).status).toBe(204);
    for (const list of ['messages', 'threads']) {
      const res = await api.get(`/api/v1/inboxes/${inbox.inbox_id}/${list}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });
});

describe('labels', () => {
  it('adds and removes labels, and lists the labels in use with their counts, paged by name', async () => {
    // A tenant of its own: the counts are of its messages only.
    const signup = await api.post('/api/v1/auth/signup', { email: 'labeller@example.com', password: 'correct horse battery' });
    const mine = new ApiClient(api.baseUrl).withToken((await api.post('/api/v1/keys', { name: 'agent' }, { token: signup.body.access_token })).body.key);
    const inbox = await newInbox(undefined, mine);
    for (const subject of ['first', 'second']) await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject, text: 'hello' });
    const listed = await waitFor(async () => {
      const res = await mine.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`);
      return res.body.data.length === 2 && (res.body.data as { message_id: string; subject: string }[]);
    });
    const id = (subject: string) => listed.find((m) => m.subject === subject)!.message_id;
    expect((await mine.post(`/api/v1/messages/${id('first')}/labels`, { labels: ['alpha', 'beta'] })).status).toBe(200);
    expect((await mine.post(`/api/v1/messages/${id('second')}/labels`, { labels: ['beta', 'gamma'] })).status).toBe(200);
    const removed = await mine.request('DELETE', `/api/v1/messages/${id('first')}/labels`, { labels: ['alpha'] });
    expect(removed.status).toBe(200);
    expect(removed.body.labels).not.toContain('alpha');

    const pages: { label: string; message_count: number; system: boolean }[][] = [];
    let token: string | null = null;
    do {
      const res: { status: number; body: { data: { label: string; message_count: number; system: boolean }[]; next_page_token: string | null } } = await mine.get(`/api/v1/labels?limit=2${token ? `&page_token=${token}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(res.body.data);
      token = res.body.next_page_token;
    } while (token && pages.length < 10);
    expect(pages.every((p) => p.length <= 2)).toBe(true);
    const all = pages.flat();
    expect(all.map((l) => l.label)).toEqual([...all.map((l) => l.label)].sort());
    expect(all).toEqual(
      expect.arrayContaining([
        { label: 'beta', message_count: 2, system: false },
        { label: 'gamma', message_count: 1, system: false },
        { label: 'received', message_count: 2, system: true },
      ]),
    );
    expect(all.map((l) => l.label)).not.toContain('alpha');
    expect((await mine.get('/api/v1/labels?limit=0')).status).toBe(400);
    expect((await mine.get('/api/v1/labels?page_token=bm90LWEtY3Vyc29y')).status).toBe(400);
  });
});

describe('receiving', () => {
  it('stores a reply, strips its quoted history, threads it, and announces message.received', async () => {
    const inbox = await newInbox('support');
    const first = await transport().sendMail({
      from: 'Ada <ada@sender.test>',
      to: inbox.address,
      subject: 'Invoice 42',
      text: 'Hello,\n\nwhere is invoice 42?\n\nAda',
      messageId: '<first@sender.test>',
    });
    expect(first.response).toMatch(/^250 2\.0\.0 Ok: queued as raw_/);
    const reply = await transport().sendMail({
      from: 'Ada <ada@sender.test>',
      to: inbox.address,
      cc: 'boss@sender.test',
      subject: 'Re: Invoice 42',
      inReplyTo: '<first@sender.test>',
      references: '<first@sender.test>',
      messageId: '<second@sender.test>',
      text: 'Thanks, found it.\n\nOn Mon, Nov 23, 2026 at 9:00 AM Support <support@agents.test> wrote:\n> Here is invoice 42.\n> Regards\n\n-- \nAda Lovelace\nAnalytical Engines Ltd',
    });
    expect(reply.accepted).toEqual([inbox.address]);

    const list = await messagesOf(inbox.inbox_id, 2);
    expect(list[0].subject).toBe('Re: Invoice 42');
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${list[0].message_id}`)).body;
    expect(message).toMatchObject({
      inbox_id: inbox.inbox_id,
      from_address: 'ada@sender.test',
      to_addresses: [inbox.address],
      cc_addresses: ['boss@sender.test'],
      subject: 'Re: Invoice 42',
      extracted_text: 'Thanks, found it.',
      in_reply_to: 'first@sender.test',
      references: ['first@sender.test'],
      html_body: '',
      attachments: [],
      auth: { spf: { result: 'pass' }, dkim: { result: 'none' }, dmarc: { result: 'pass' } },
      spam: { verdict: 'ham', score: expect.any(Number) },
    });
    expect(message.text_body).toContain('> Here is invoice 42.');
    expect(message.labels).toEqual(['received']);
    expect(message.thread_id).toBe(list[1].thread_id);

    const event = await tap.waitFor((e) => e.type === 'message.received' && e.data.message_id === message.message_id);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'message.received',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      org_id: expect.stringMatching(/^org_/),
      env_id: expect.stringMatching(/^env_/),
      data: {
        message_id: message.message_id,
        thread_id: message.thread_id,
        inbox_id: inbox.inbox_id,
        from_address: 'ada@sender.test',
        to_addresses: [inbox.address],
        subject: 'Re: Invoice 42',
        extracted_text: 'Thanks, found it.',
        has_attachments: false,
        received_at: message.received_at,
      },
    });
    // On the wire, exactly the envelope's fields.
    const wire = JSON.parse(tap.raw[tap.events.indexOf(event)]!);
    expect(Object.keys(wire).sort()).toEqual(['data', 'env_id', 'id', 'org_id', 'timestamp', 'type']);

    const thread = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/threads/${message.thread_id}`)).body;
    expect(thread).toMatchObject({ subject: 'Invoice 42', message_count: 2, labels: ['received'] });
    expect(thread.messages.map((m: any) => m.subject)).toEqual(['Invoice 42', 'Re: Invoice 42']);
    const threads = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/threads`)).body.data;
    expect(threads).toHaveLength(1);
  });

  it('gives the HTML part without its quoted history, sanitized, as extracted_html (not in message.received)', async () => {
    const inbox = await newInbox('htmlreply');
    await transport().sendMail({
      from: 'Ada <ada@sender.test>',
      to: inbox.address,
      subject: 'Re: Lunch',
      messageId: '<html-reply@sender.test>',
      text: 'Yes, noon works.\n\nOn Mon, Nov 23, 2026 at 9:00 AM Support <support@agents.test> wrote:\n> Lunch at noon?',
      html:
        '<div dir="ltr">Yes, <b>noon</b> works.<img src="https://tracker.test/p.gif"><script>alert(1)</script></div>' +
        '<div class="gmail_quote"><div class="gmail_attr">On Mon, Nov 23, 2026 at 9:00 AM Support &lt;support@agents.test&gt; wrote:</div>' +
        '<blockquote class="gmail_quote">Lunch at noon?</blockquote></div>',
    });
    const [listed] = await messagesOf(inbox.inbox_id, 1);
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${listed.message_id}`)).body;
    expect(message.extracted_text).toBe('Yes, noon works.');
    expect(message.extracted_html).toBe('<div dir="ltr">Yes, <b>noon</b> works.</div>');
    expect(message.html_body).toContain('Lunch at noon?');
    const event = await tap.waitFor((e) => e.type === 'message.received' && e.data.message_id === message.message_id);
    expect(Object.keys(event.data)).not.toContain('extracted_html');
  });

  it("keeps an Outlook forward's mail, told from a reply by the message's subject", async () => {
    const inbox = await newInbox('outlookfw');
    const block = 'From: Billing <billing@vendor.test>\nSent: Monday, November 23, 2026 9:00 AM\nTo: Ada <ada@sender.test>\nSubject: Invoice 1042\n\nInvoice 1042 is due on December 1.';
    await transport().sendMail({ from: 'Ada <ada@sender.test>', to: inbox.address, subject: 'FW: Invoice 1042', text: `Please pay this one.\n\n________________________________\n${block}` });
    await transport().sendMail({ from: 'Ada <ada@sender.test>', to: inbox.address, subject: 'RE: Invoice 1042', text: `Paid, thanks.\n\n________________________________\n${block}` });
    const messages = await messagesOf(inbox.inbox_id, 2);
    const bodies = await Promise.all(messages.map(async (m: { message_id: string }) => (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${m.message_id}`)).body));
    const bySubject = Object.fromEntries(bodies.map((m: { subject: string; extracted_text: string }) => [m.subject, m.extracted_text]));
    expect(bySubject['FW: Invoice 1042']).toBe(`Please pay this one.\n\n${block}`);
    expect(bySubject['RE: Invoice 1042']).toBe('Paid, thanks.');
  });

  it('starts a new thread when the subject changed, even with In-Reply-To', async () => {
    const inbox = await newInbox();
    await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Topic A', text: 'a', messageId: '<a1@sender.test>' });
    await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Something else', text: 'b', inReplyTo: '<a1@sender.test>' });
    const list = await messagesOf(inbox.inbox_id, 2);
    expect(list[0].thread_id).not.toBe(list[1].thread_id);
  });

  it('gives back the raw bytes and the attachments as sent', async () => {
    const inbox = await newInbox();
    const pdf = Buffer.from('%PDF-1.4 pretend');
    await transport().sendMail({
      from: 'ada@sender.test',
      to: inbox.address,
      subject: 'With file',
      text: 'see attached',
      attachments: [{ filename: 'rapport é.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    const [summary] = await messagesOf(inbox.inbox_id);
    expect(summary.has_attachments).toBe(true);
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${summary.message_id}`)).body;
    expect(message.attachments).toEqual([{ attachment_id: expect.stringMatching(/^att_/), filename: 'rapport é.pdf', content_type: 'application/pdf', size: pdf.length, download_url: expect.stringContaining('/api/v1/downloads/') }]);
    const file = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${message.message_id}/attachments/${message.attachments[0].attachment_id}`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain("filename*=UTF-8''rapport%20%C3%A9.pdf");
    expect(Buffer.from(await file.arrayBuffer())).toEqual(pdf);
    const raw = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${message.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const bytes = Buffer.from(await raw.arrayBuffer()).toString('latin1');
    expect(bytes).toContain('Subject: With file');
    expect(bytes.endsWith('\r\n')).toBe(true);
    const other = await api.post('/api/v1/auth/signup', { email: 'nosy@example.com', password: 'correct horse battery' });
    const nosy = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${message.message_id}/raw`, { headers: { authorization: `Bearer ${other.body.access_token}` } });
    expect(nosy.status).toBe(404);
  });

  it('keeps a message larger than the inline limit in the object store before queueing it, byte for byte', async () => {
    const inbox = await newInbox();
    const body = `${'0123456789abcdef'.repeat(4).concat('\r\n').repeat(1200)}`; // ~80 KB, over the 16 KB inline limit of this test
    const info = await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Big one', text: body });
    const [summary] = await messagesOf(inbox.inbox_id);
    const raw = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${summary.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(16 * 1024);
    expect(bytes.toString('latin1')).toContain(`Message-ID: ${info.messageId}`);
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${summary.message_id}`)).body;
    expect(message.text_body.replace(/\r\n/g, '\n')).toBe(body.replace(/\r\n/g, '\n'));
  });

  it('stores a message carrying NUL characters (8bit body, encoded subject, file name) without them; the raw message keeps them', async () => {
    const inbox = await newInbox();
    const data = Buffer.concat([
      Buffer.from(
        `From: ada@sender.test\r\nTo: ${inbox.address}\r\nSubject: =?utf-8?q?nul=00here?=\r\nMessage-ID: <nul-1@sender.test>\r\nMIME-Version: 1.0\r\n` +
          'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nbefore',
      ),
      Buffer.from([0]),
      Buffer.from('after\r\n--b\r\nContent-Type: text/plain; name="=?utf-8?q?f=00.txt?="\r\nContent-Disposition: attachment; filename*=utf-8\'\'f%00.txt\r\n\r\nfile\r\n--b--\r\n.\r\n'),
    ]);
    const { conn, reply } = await rawTransaction(inbox.address, data);
    conn.close();
    expect(reply.code).toBe(250);
    const [summary] = await messagesOf(inbox.inbox_id);
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${summary.message_id}`)).body;
    expect([message.subject, message.text_body.trim(), message.attachments.map((a: { filename: string }) => a.filename)]).toEqual(['nulhere', 'beforeafter', ['f.txt']]);
    const raw = await fetch(`${api.baseUrl}/api/v1/inboxes/${inbox.inbox_id}/messages/${message.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(Buffer.from(await raw.arrayBuffer()).includes(Buffer.from('before\u0000after'))).toBe(true);
  });

  it('stores one message per recipient inbox for one transaction', async () => {
    const a = await newInbox();
    const b = await newInbox();
    const info = await transport().sendMail({ from: 'ada@sender.test', to: [a.address, b.address, a.address.toUpperCase()], subject: 'Both', text: 'hi both' });
    expect(info.accepted).toHaveLength(3);
    const [ma] = await messagesOf(a.inbox_id);
    const [mb] = await messagesOf(b.inbox_id);
    expect(ma.message_id).not.toBe(mb.message_id);
    expect((await api.get(`/api/v1/inboxes/${a.inbox_id}/messages`)).body.data).toHaveLength(1);
  });

  it('labels a message that fails SPF and has no DKIM as unauthenticated', async () => {
    const inbox = await newInbox();
    await transport().sendMail({ from: 'ceo@forged.test', envelope: { from: 'ceo@forged.test', to: inbox.address }, to: inbox.address, subject: 'Urgent wire', text: 'pay now' });
    const [m] = await messagesOf(inbox.inbox_id);
    const message = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${m.message_id}`)).body;
    expect(message.auth.spf.result).toBe('fail');
    expect(message.auth.dmarc).toMatchObject({ result: 'fail', details: 'p=reject' });
    expect(message.labels).toEqual(['received', 'unauthenticated']);
  });
});

describe('refusals at the SMTP edge', () => {
  it('refuses unknown recipients, foreign domains and deleted inboxes at RCPT', async () => {
    const inbox = await newInbox();
    await api.delete(`/api/v1/inboxes/${inbox.inbox_id}`);
    const conn = await RawSmtp.connect(mailroom.smtpPort);
    await conn.reply();
    await conn.command('EHLO mail.sender.test');
    await conn.command('MAIL FROM:<ada@sender.test>');
    expect(await conn.command(`RCPT TO:<nobody@${DOMAIN}>`)).toEqual({ code: 550, text: '5.1.1 No such mailbox' });
    expect((await conn.command('RCPT TO:<someone@gmail.com>')).text).toMatch(/^5\.7\.1 Relaying denied/);
    // Deleted inboxes are refused once the recipient cache (5 s) forgets them.
    await waitFor(async () => (await conn.command(`RCPT TO:<${inbox.address}>`)).code === 550, { timeoutMs: 10_000, intervalMs: 500 });
    conn.close();
  });

  it('advertises SIZE, 8BITMIME, SMTPUTF8 and PIPELINING; no STARTTLS without a certificate, no AUTH', async () => {
    const conn = await RawSmtp.connect(mailroom.smtpPort);
    expect((await conn.reply()).text).toMatch(/^mx\.agents\.test .*ESMTP/);
    const ehlo = await conn.command('EHLO mail.sender.test');
    conn.close();
    expect(ehlo.code).toBe(250);
    const features = (ehlo.lines ?? []).slice(1);
    expect(features).toEqual(expect.arrayContaining(['PIPELINING', '8BITMIME', 'SMTPUTF8', `SIZE ${200 * 1024}`]));
    expect(features.some((f) => /^(STARTTLS|AUTH)/.test(f))).toBe(false);
  });

  it('rejects GTUBE at DATA and stores nothing', async () => {
    const inbox = await newInbox();
    const err = await transport()
      .sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'spam test', text: 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X' })
      .catch((e: { responseCode?: number; response?: string }) => e);
    expect(err).toMatchObject({ responseCode: 550 });
    expect((err as { response: string }).response).toMatch(/5\.7\.1 Message rejected as spam/);
    await transport().sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'after', text: 'fine' });
    const list = await messagesOf(inbox.inbox_id);
    expect(list.map((m) => m.subject)).toEqual(['after']);
  });

  it('answers 552 as soon as a message exceeds the limit, and hangs up without reading the rest', async () => {
    const inbox = await newInbox();
    const conn = await RawSmtp.connect(mailroom.smtpPort);
    await conn.reply();
    await conn.command('EHLO mail.sender.test');
    await conn.command('MAIL FROM:<ada@sender.test>');
    await conn.command(`RCPT TO:<${inbox.address}>`);
    expect((await conn.command('DATA')).code).toBe(354);
    const line = `${'x'.repeat(998)}\r\n`;
    let sent = 0;
    const replyPromise = conn.reply();
    // Up to 20 MB, far past the 200 KB limit of this test; stop as soon as the server answered.
    let answered = false;
    void replyPromise.then(() => (answered = true));
    while (!answered && !conn.closed && sent < 20 * 1024 * 1024) {
      await conn.write(line.repeat(64));
      sent += line.length * 64;
    }
    const reply = await replyPromise;
    expect(reply.code).toBe(552);
    expect(reply.text).toMatch(/^5\.3\.4/);
    expect(sent).toBeLessThan(20 * 1024 * 1024);
    await waitFor(() => conn.closed, { what: 'the server to close the connection' });
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data).toEqual([]);
  });

  it('never yields a second message from a malformed end-of-data sequence (smtp-smuggling corpus)', async () => {
    const corpus = JSON.parse(readFileSync(corpusPath('smtp-smuggling', 'eod-sequences.json'), 'utf8'));
    const sequences: [string, string][] = [
      ...Object.entries(corpus.hannob_smtpsmug as Record<string, string>),
      ...(corpus.the_login_inbound as string[]).map((s, i): [string, string] => [`the_login_inbound[${i}]`, s]),
      ...(corpus.the_login_outbound_extra as string[]).map((s, i): [string, string] => [`the_login_outbound_extra[${i}]`, s]),
    ];
    const inbox = await newInbox();
    const victim = await newInbox();
    let accepted = 0;
    for (const [name, eod] of sequences) {
      const smuggled = `MAIL FROM:<admin@sender.test>\r\nRCPT TO:<${victim.address}>\r\nDATA\r\nSubject: smuggled ${name}\r\n\r\nsmuggled\r\n.\r\n`;
      const data = `Subject: carrier ${name}\r\nFrom: ada@sender.test\r\n\r\nhello${eod}${smuggled}`;
      const { conn, reply } = await rawTransaction(inbox.address, data);
      // Whatever came first, the client may send more commands; none of them may be read as a message.
      // A bare CR or LF anywhere fails the transaction; the NUL variant (no bare line ending) is
      // one message that carries the would-be smuggled commands as text.
      if (/[^\r]\n|\r[^\n]/.test(`o${eod}M`)) expect(reply).toEqual({ code: 550, text: '5.6.0 Message contains a bare CR or LF; lines must end with CRLF' });
      else expect(reply.code).toBe(250);
      if (reply.code === 250) accepted++;
      // Whatever the client sends next is read as commands of a new transaction, never as a message of its own.
      conn.close();
    }
    expect(accepted).toBe(2); // the NUL-before-dot sequence, listed twice in the corpus
    const stored = await waitFor(async () => {
      const res = await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`);
      return res.body.data.length === accepted && res.body.data;
    });
    for (const m of stored) expect(m.subject).toMatch(/^carrier /);
    expect((await api.get(`/api/v1/inboxes/${victim.inbox_id}/messages`)).body.data).toEqual([]);
  });

  it('refuses an empty DATA (nothing before the dot) rather than accept what cannot be stored', async () => {
    const inbox = await newInbox();
    const { conn, reply } = await rawTransaction(inbox.address, '.\r\n');
    expect(reply).toEqual({ code: 550, text: '5.6.0 Message is empty: no header, no body' });
    // The session goes on: the next transaction is accepted and stored.
    expect((await conn.command('MAIL FROM:<ada@sender.test>')).code).toBe(250);
    expect((await conn.command(`RCPT TO:<${inbox.address}>`)).code).toBe(250);
    expect((await conn.command('DATA')).code).toBe(354);
    await conn.write('Subject: after the empty one\r\n\r\nhello\r\n.\r\n');
    expect((await conn.reply()).code).toBe(250);
    conn.close();
    expect((await messagesOf(inbox.inbox_id)).map((m) => m.subject)).toEqual(['after the empty one']);
  });

  it('keeps two properly terminated messages sent in one write as two messages, and a bare LF one as none', async () => {
    const inbox = await newInbox();
    const conn = await RawSmtp.connect(mailroom.smtpPort);
    await conn.reply();
    await conn.command('EHLO mail.sender.test');
    // One write: transaction 1, then transaction 2, before any reply is read.
    const tx = () => `MAIL FROM:<ada@sender.test>\r\nRCPT TO:<${inbox.address}>\r\nDATA\r\n`;
    await conn.write(`${tx()}Subject: one\r\n\r\nfirst\r\n.\r\n${tx()}Subject: two\r\n\r\nsecond\n.\n\r\n.\r\n`);
    const replies = [];
    for (let i = 0; i < 8; i++) replies.push((await conn.reply()).code);
    expect(replies).toEqual([250, 250, 354, 250, 250, 250, 354, 550]);
    conn.close();
    const list = await messagesOf(inbox.inbox_id);
    expect(list.map((m) => m.subject)).toEqual(['one']);
  });
});
