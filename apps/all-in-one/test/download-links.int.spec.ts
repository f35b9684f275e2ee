/**
 * Signed download links, as a user's tools would use them: a 20 MB attachment received over
 * real SMTP is fetched through its message's download_url with curl and no credential, byte
 * for byte; the raw message's link gives what the authenticated /raw does; an altered link and,
 * once the platform's clock (the test's) passes its hour, an expired one are refused with 403
 * in the error shape.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { ManualClock } from '@mailroom/platform';
import { waitFor } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const clock = new ManualClock(new Date());
// A 20 MB file is about 27.4 MB once base64-encoded in a message: over the default 25 MB the SMTP edge takes.
const mailroom = usePlatform({ clock, env: { MAIL_DOMAIN: DOMAIN, RSPAMD_URL: 'off', SMTP_MAX_MESSAGE_BYTES: String(32 * 1024 * 1024) } });
const { api, tenant } = mailroom;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** curl, as a user would run it: no Authorization header, the body to a file, the status printed. */
async function curl(url: string): Promise<{ status: number; body: Buffer }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'links-'));
  try {
    const out = path.join(dir, 'body');
    const { stdout } = await promisify(execFile)('curl', ['--silent', '--show-error', '--output', out, '--write-out', '%{http_code}', url]);
    return { status: Number(stdout), body: await readFile(out) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('signed download links', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(20 * 1024 * 1024 - 9)]);
  let message: Record<string, any>;
  let inboxId: string;

  beforeAll(async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'invoices' })).body;
    inboxId = inbox.inbox_id;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailroom.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await transport.sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Invoice 7', text: 'attached', attachments: [{ filename: 'invoice 7.pdf', content: pdf, contentType: 'application/pdf' }] });
    const summary = await waitFor(async () => (await api.get(`/api/v1/inboxes/${inboxId}/messages`)).body.data?.[0], { timeoutMs: 60_000, what: 'the 20 MB message stored' });
    message = (await api.get(`/api/v1/inboxes/${inboxId}/messages/${summary.message_id}`)).body;
  }, 120_000);

  it('reads a message with links to its raw bytes and each attachment, expiring in an hour', () => {
    expect(message.attachments).toEqual([
      { attachment_id: expect.stringMatching(/^att_/), filename: 'invoice 7.pdf', content_type: 'application/pdf', size: pdf.length, download_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/downloads\//) },
    ]);
    expect(message.raw_download_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/downloads\//);
    const expires = Math.floor(clock.now().getTime() / 1000) * 1000 + 3_600_000;
    expect(message.download_urls_expire_at).toBe(new Date(expires).toISOString());
  });

  it('downloads the 20 MB attachment with curl and no credential, byte-identical', async () => {
    const got = await curl(message.attachments[0].download_url);
    expect(got.status).toBe(200);
    expect(got.body.length).toBe(pdf.length);
    expect(sha256(got.body)).toBe(sha256(pdf));
    const res = await fetch(message.attachments[0].download_url, { method: 'GET' });
    expect([res.headers.get('content-type'), res.headers.get('content-disposition'), res.headers.get('x-content-type-options')]).toEqual([
      'application/pdf',
      `attachment; filename="invoice 7.pdf"; filename*=UTF-8''invoice%207.pdf`,
      'nosniff',
    ]);
    await res.body?.cancel();
  }, 60_000);

  it('gives the raw message as the authenticated /raw does', async () => {
    const linked = await fetch(message.raw_download_url);
    expect(linked.status).toBe(200);
    const raw = await fetch(`${mailroom.url}/api/v1/inboxes/${inboxId}/messages/${message.message_id}/raw`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(sha256(Buffer.from(await linked.arrayBuffer()))).toBe(sha256(Buffer.from(await raw.arrayBuffer())));
  }, 60_000);

  it('links the messages of a thread read as well', async () => {
    const thread = (await api.get(`/api/v1/inboxes/${inboxId}/threads/${message.thread_id}`)).body;
    expect(thread.messages[0]).toMatchObject({ raw_download_url: expect.any(String), attachments: [{ download_url: expect.any(String) }] });
  });

  it('refuses an altered link, and an expired one, with 403 in the error shape', async () => {
    const url: string = message.attachments[0].download_url;
    const token = url.slice(url.lastIndexOf('/') + 1);
    const parts = token.split('.');
    // Another attachment id, and a later expiry: either way the signature no longer matches.
    const otherObject = [...parts.slice(0, 5), 'att_00000000000000000000000000', ...parts.slice(6)].join('.');
    const later = [...parts.slice(0, 6), String(Number(parts[6]) + 86_400), parts[7]].join('.');
    for (const bad of [otherObject, later, `${token.slice(0, -2)}AA`, 'nothing']) {
      const res = await curl(`${mailroom.url}/api/v1/downloads/${bad}`);
      expect(res.status).toBe(403);
      const body = JSON.parse(res.body.toString());
      expect(body.error).toEqual({ code: 'invalid_link', message: expect.stringContaining('not valid'), request_id: expect.any(String) });
    }

    clock.advance(3_600_000);
    const expired = await curl(url);
    expect(expired.status).toBe(403);
    expect(JSON.parse(expired.body.toString()).error).toEqual({ code: 'link_expired', message: expect.stringContaining('expired at'), request_id: expect.any(String) });
    // A fresh read gives fresh links.
    const again = (await api.get(`/api/v1/inboxes/${inboxId}/messages/${message.message_id}`)).body;
    const res = await fetch(again.attachments[0].download_url);
    expect(res.status).toBe(200);
    await res.body?.cancel();
  }, 60_000);
});
