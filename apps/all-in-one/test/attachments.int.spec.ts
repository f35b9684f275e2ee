/**
 * Attachments of real size, as an agent would send them: a 20 MB file uploaded once
 * (POST /api/v1/attachments, streamed to the object store), referred to by id in a send and
 * a reply, leaves through a real SMTP relay byte-identical (SHA-256) and DKIM-signed with
 * the key the domain publishes. Uploads are the tenant's own, expire after 24 hours (the
 * platform runs on the test's clock), and bad uploads get a 4xx in the error shape.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { simpleParser } from 'mailparser';
import { ManualClock } from '@mailroom/platform';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const clock = new ManualClock(new Date());
let relay: TestRelay;
let smtpPort: number;

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicB64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
});
const mailroom = usePlatform({
  clock,
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
    // Several sends of 20 MB: copied and composed within the gateway's wait on the services.
    RPC_TIMEOUT_MS: '10000',
    // The file server of the {url} tests listens on loopback, which the guard refuses otherwise.
    ATTACHMENT_URL_ALLOWED_CIDRS: '127.0.0.1/32',
    ATTACHMENT_URL_TIMEOUT_MS: '5000',
  }),
  dns: [{ name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicB64}` }],
});
const { api, dns, signUp, tenant } = mailroom;
afterAll(async () => {
  await relay?.close();
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const relayedTo = (address: string) => waitFor(() => relay.received.find((m) => m.rcptTo.includes(address)), { timeoutMs: 60_000, what: `a message to ${address}` });

async function upload(file: Buffer, filename: string, type: string, key?: string) {
  const form = new FormData();
  form.append('note', 'ignored');
  form.append('file', new Blob([file], { type }), filename);
  const res = await fetch(`${mailroom.url}/api/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${key ?? apiKey()}` }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function uploadRaw(file: Buffer, query: string, headers: Record<string, string>) {
  const res = await fetch(`${mailroom.url}/api/v1/attachments${query}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey()}`, ...headers }, body: file });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The tenant's API key. */
function apiKey(): string {
  return tenant.key;
}

async function verifyDkim(raw: Buffer) {
  const resolver = new Resolver();
  resolver.setServers([dns.servers]);
  const verdict = await dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
  return verdict.results.map((r) => [r.signingDomain, r.status.result]);
}

describe('uploading and sending a 20 MB file', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(20 * 1024 * 1024 - 9)]);

  it('answers the upload with its size and SHA-256, sends it byte-identical and DKIM-signed, and again in a reply', async () => {
    const up = await upload(pdf, 'invoice 42.pdf', 'application/pdf');
    expect(up.status).toBe(201);
    expect(up.body).toEqual({
      attachment_id: expect.stringMatching(/^att_/),
      filename: 'invoice 42.pdf',
      content_type: 'application/pdf',
      size: pdf.length,
      sha256: sha256(pdf),
      expires_at: new Date(clock.now().getTime() + 24 * 3_600_000).toISOString(),
    });

    const inbox = (await api.post('/api/v1/inboxes', { username: 'billing' })).body;
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, {
      to: 'ada@sender.test',
      subject: 'Invoice 42',
      text_body: 'The invoice is attached.',
      attachments: [{ attachment_id: up.body.attachment_id }, { filename: 'note.txt', content_base64: Buffer.from('small').toString('base64') }],
    });
    expect(sent.status).toBe(200);
    const out = await relayedTo('ada@sender.test');
    expect(await verifyDkim(out.raw)).toEqual([[DOMAIN, 'pass']]);
    const parsed = await simpleParser(out.raw);
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.size])).toEqual([
      ['invoice 42.pdf', 'application/pdf', pdf.length],
      ['note.txt', 'text/plain', 5],
    ]);
    expect(sha256(parsed.attachments[0]!.content)).toBe(sha256(pdf));

    // The stored message lists it, and it downloads whole.
    const stored = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${sent.body.message_id}`)).body;
    const attachment = stored.attachments.find((a: { filename: string }) => a.filename === 'invoice 42.pdf');
    expect(attachment.size).toBe(pdf.length);
    const download = await fetch(`${mailroom.url}/api/v1/inboxes/${inbox.inbox_id}/messages/${sent.body.message_id}/attachments/${attachment.attachment_id}`, { headers: { authorization: `Bearer ${apiKey()}` } });
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(pdf));

    // The same upload, in a reply to that message (another thread member): sent again.
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${sent.body.message_id}/reply`, { text_body: 'Again, for your records.', attachments: [{ attachment_id: up.body.attachment_id }] });
    expect(reply.status).toBe(200);
    const again = await waitFor(() => relay.received.filter((m) => m.rcptTo.includes('ada@sender.test'))[1], { timeoutMs: 60_000, what: 'the reply' });
    expect(await verifyDkim(again.raw)).toEqual([[DOMAIN, 'pass']]);
    expect(sha256((await simpleParser(again.raw)).attachments[0]!.content)).toBe(sha256(pdf));
  }, 180_000);

  it('takes the bytes themselves with their Content-Type and ?filename=', async () => {
    const body = Buffer.from('col1,col2\n1,2\n');
    const up = await uploadRaw(body, '?filename=data.csv', { 'content-type': 'text/csv' });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ filename: 'data.csv', content_type: 'text/csv', size: body.length, sha256: sha256(body) });
  });
});

describe('what is refused', () => {
  const small = Buffer.from('hello');

  it('refuses an upload without a file name, without a Content-Type, over the limit, or with two files', async () => {
    const cases = [
      await uploadRaw(small, '', { 'content-type': 'text/plain' }),
      await uploadRaw(small, '?filename=a.txt', { 'content-type': 'not a type' }),
      await uploadRaw(small, '?filename=../a.txt', { 'content-type': 'text/plain' }),
      await (async () => {
        const form = new FormData();
        form.append('file', new Blob([small]), 'a.txt');
        form.append('file2', new Blob([small]), 'b.txt');
        const res = await fetch(`${mailroom.url}/api/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${apiKey()}` }, body: form });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      })(),
      await (async () => {
        const form = new FormData();
        form.append('note', 'no file here');
        const res = await fetch(`${mailroom.url}/api/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${apiKey()}` }, body: form });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      })(),
    ];
    expect(cases.map((c) => [c.status, c.body.error.code])).toEqual([
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
    ]);
    for (const c of cases) expect(c.body.error).toEqual(expect.objectContaining({ message: expect.any(String), request_id: expect.any(String) }));

    const none = await fetch(`${mailroom.url}/api/v1/attachments?filename=a.txt`, { method: 'POST', headers: { authorization: `Bearer ${apiKey()}` }, body: small });
    // fetch sends a Buffer without a Content-Type: the type of the file is not known.
    expect([none.status, ((await none.json()) as { error: { code: string } }).error.code]).toEqual([415, 'unsupported_media_type']);

    // Over 25 MB: refused as Content-Length says so, and when streamed without one.
    const over = Buffer.alloc(25 * 1024 * 1024 + 1);
    const big = await uploadRaw(over, '?filename=big.bin', { 'content-type': 'application/octet-stream' });
    expect([big.status, big.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(big.body.error.message).toContain(String(25 * 1024 * 1024));
    const bigForm = await upload(over, 'big.bin', 'application/octet-stream');
    expect([bigForm.status, bigForm.body.error.code]).toEqual([413, 'payload_too_large']);
  }, 120_000);

  it('answers 404 for another tenant’s upload, 410 once it expired, and 413 for a message over the limit, storing nothing', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'refusals' })).body;
    const path = `/api/v1/inboxes/${inbox.inbox_id}/messages/send`;
    const base = { to: 'pat@sender.test', subject: 'x', text_body: 'x' };
    const other = await signUp(`other-${Date.now()}@example.com`);
    const theirs = await upload(small, 'theirs.txt', 'text/plain', other.key);
    expect(theirs.status).toBe(201);
    const foreign = await api.post(path, { ...base, attachments: [{ attachment_id: theirs.body.attachment_id }] });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);

    // 13 MB twice: each fits, together they pass 25 MB.
    const half = Buffer.alloc(13 * 1024 * 1024, 1);
    const [a, b] = [await upload(half, 'a.bin', 'application/octet-stream'), await upload(half, 'b.bin', 'application/octet-stream')];
    const before = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data.length;
    const tooBig = await api.post(path, { ...base, attachments: [{ attachment_id: a.body.attachment_id }, { attachment_id: b.body.attachment_id }] });
    expect([tooBig.status, tooBig.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(tooBig.body.error.message).toContain('SEND_MAX_MESSAGE_BYTES');
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data.length).toBe(before);

    clock.advance(24 * 3_600_000 + 1_000);
    const expired = await api.post(path, { ...base, attachments: [{ attachment_id: a.body.attachment_id }] });
    expect([expired.status, expired.body.error.code]).toEqual([410, 'expired']);
    const unknown = await api.post(path, { ...base, attachments: [{ attachment_id: 'att_00000000000000000000000000' }] });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
  }, 120_000);
});

describe('attachments given by URL', () => {
  const report = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3 * 1024 * 1024)]);
  let files: Server;
  let base: string;
  /** Requests that reached the file server, by path. */
  const served: string[] = [];

  beforeAll(async () => {
    files = createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url === '/files/q3%20report.pdf') res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': report.length }).end(report);
      else if (req.url === '/moved') res.writeHead(302, { location: '/files/q3%20report.pdf' }).end();
      else if (req.url === '/huge') res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 26 * 1024 * 1024 }).end();
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => files?.close(resolve));
  });

  it('fetches the file when the reply is made and sends it byte-identical, DKIM-signed', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'reports' })).body;
    const first = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: 'lee@sender.test', subject: 'Q3', text_body: 'Report follows.' });
    expect(first.status).toBe(200);
    await relayedTo('lee@sender.test');
    const reply = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/${first.body.message_id}/reply`, { text_body: 'Here it is.', attachments: [{ url: `${base}/files/q3%20report.pdf` }] });
    expect(reply.status).toBe(200);
    const out = await waitFor(() => relay.received.filter((m) => m.rcptTo.includes('lee@sender.test'))[1], { timeoutMs: 60_000, what: 'the reply with the fetched file' });
    expect(await verifyDkim(out.raw)).toEqual([[DOMAIN, 'pass']]);
    const [file] = (await simpleParser(out.raw)).attachments;
    expect([file!.filename, file!.contentType, sha256(file!.content)]).toEqual(['q3 report.pdf', 'application/pdf', sha256(report)]);
  }, 120_000);

  it('refuses what it cannot fetch: a private address, a redirect, a 404, a file over the limit (nothing sent)', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'urls' })).body;
    const send = (url: string) => api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: 'kim@sender.test', subject: 'x', text_body: 'x', attachments: [{ url }] });
    const results = [await send('http://169.254.169.254/latest/meta-data/'), await send(`${base}/moved`), await send(`${base}/missing.pdf`), await send(`${base}/huge`), await send('ftp://example.com/a.pdf')];
    expect(results.map((r) => [r.status, r.body.error.code])).toEqual([
      [422, 'unprocessable'],
      [422, 'unprocessable'],
      [422, 'unprocessable'],
      [413, 'payload_too_large'],
      [400, 'invalid_request'],
    ]);
    expect(results[0]!.body.error.message).toContain('not a public address');
    expect(results[1]!.body.error.message).toContain('redirects are not followed');
    // The redirect was not followed: the file behind it was never asked for by these sends.
    expect(served.filter((p) => p === '/files/q3%20report.pdf')).toHaveLength(1);
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data).toEqual([]);
  }, 60_000);
});
