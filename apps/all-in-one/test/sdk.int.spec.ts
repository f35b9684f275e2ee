/**
 * The agent loop through @mailroom/sdk alone: a webhook endpoint and an inbox made with the
 * SDK, mail arriving over SMTP, its message.received delivery checked with verifyWebhook, the
 * message read and answered with the SDK (a reply goes out through a real SMTP relay), and the
 * message.sent delivery checked the same way. Errors arrive as MailroomError.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { Mailroom, MailroomError, verifyWebhook, type WebhookEvent } from '@mailroom/sdk';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;
/** What the test's webhook receiver got, byte for byte. */
const deliveries: { raw: Buffer; headers: IncomingHttpHeaders }[] = [];
let receiver: Server;

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: () => 'deliver' });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
const platform = usePlatform({
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  }),
  dns: [{ name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' }],
});
afterAll(async () => {
  await relay?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The first delivery that verifies with the secret and is of this type and message. */
function delivered(secret: string, type: string, match: (data: Record<string, unknown>) => boolean): Promise<WebhookEvent> {
  return waitFor(
    () => deliveries.map((d) => verifyWebhook(d.raw, d.headers, secret)).find((e) => e.type === type && match(e.data)),
    { timeoutMs: 20_000, what: `a verified ${type} delivery` },
  );
}

describe('the agent loop through the SDK', () => {
  it('receives mail, is told by a verified webhook, reads and replies, and is told the reply left', async () => {
    const mr = new Mailroom({ apiKey: platform.tenant.key, baseUrl: platform.url, env: {} });
    const port = (receiver.address() as AddressInfo).port;
    const { data: endpoint } = await mr.webhooks.endpoint.create({ body: { url: `http://127.0.0.1:${port}/hook`, events: ['message.received', 'message.sent'] } });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const { data: inbox } = await mr.mailbox.inbox.create({ body: { username: 'helper', display_name: 'Helper' } });

    await nodemailer
      .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
      .sendMail({ from: 'Ada <ada@sender.test>', to: inbox.address, subject: 'Order 7', text: 'Where is my order?' });

    const received = await delivered(endpoint.secret!, 'message.received', (d) => d.inbox_id === inbox.inbox_id);
    const messageId = String(received.data.message_id);
    const { data: message } = await mr.mailbox.message.get({ path: { inbox_id: inbox.inbox_id, message_id: messageId } });
    expect(message).toMatchObject({ subject: 'Order 7', from_address: 'ada@sender.test', extracted_text: expect.stringContaining('Where is my order?') });

    // The SDK adds an Idempotency-Key to a reply: the API answers that it was not a replay.
    const { data: reply, response } = await mr.mailbox.message.reply({ path: { inbox_id: inbox.inbox_id, message_id: messageId }, body: { text_body: 'It ships today.' } });
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    const sent = await delivered(endpoint.secret!, 'message.sent', (d) => d.message_id === reply.message_id);
    expect(sent.data).toMatchObject({ inbox_id: inbox.inbox_id, thread_id: received.data.thread_id, to_addresses: ['ada@sender.test'], subject: 'Re: Order 7' });
    expect(relay.received.some((m) => m.rcptTo.includes('ada@sender.test'))).toBe(true);

    // Every message of the inbox, page by page (one message a page).
    const subjects: string[] = [];
    for await (const m of mr.paginate((page_token) => mr.mailbox.message.list({ path: { inbox_id: inbox.inbox_id }, query: { limit: 1, ...(page_token ? { page_token } : {}) } }))) {
      subjects.push(m.subject);
    }
    expect(subjects.sort()).toEqual(['Order 7', 'Re: Order 7']);

    // A delivery checked with another secret does not verify.
    expect(() => verifyWebhook(deliveries[0]!.raw, deliveries[0]!.headers, 'whsec_wrong')).toThrow('bad signature');
  });

  it('throws MailroomError with the API\'s code, message, request id and details', async () => {
    const mr = new Mailroom({ apiKey: platform.tenant.key, baseUrl: platform.url, env: {} });
    const { data: inbox } = await mr.mailbox.inbox.create({ body: {} });
    const missing = await mr.mailbox.message.get({ path: { inbox_id: inbox.inbox_id, message_id: 'msg_00000000000000000000000000' } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MailroomError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });
    const invalid = await mr.mailbox.inbox.list({ query: { limit: 1000 } }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request', details: [expect.objectContaining({ path: expect.stringContaining('limit') })] });
    const anonymous = await new Mailroom({ baseUrl: platform.url, env: {} }).mailbox.inbox.list().catch((e: unknown) => e);
    expect(anonymous).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});
