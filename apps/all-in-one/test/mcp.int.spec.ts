/**
 * The MCP server (apps/mcp, built) as an MCP client runs it: the official client over stdio
 * (the server a child process, the API key in its environment) and over Streamable HTTP (the
 * key as bearer token). It lists the tools, checks every input schema as JSON Schema, and runs
 * the agent loop by tool calls alone: mail arrives over SMTP, the agent finds and reads it, and
 * replies (the reply leaves through a real SMTP relay). Attachments: a text one read as text, a
 * binary one answered as a signed link that downloads without the key; sends carrying a file
 * by URL and an uploaded one. Each management tool (inboxes, threads, labels, suppressions,
 * webhook endpoints, usage) runs once against the API. Every tool's error answer carries the
 * API's code and a fix.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const MCP_MAIN = path.resolve(__dirname, '../../mcp/dist/main.js');
const DOMAIN = 'agents.test';
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256))]);
let relay: TestRelay;
let smtpPort: number;
/** Serves the file the {url} attachments name, on loopback (allowed by ATTACHMENT_URL_ALLOWED_CIDRS below). */
let files: Server;
let filesBase: string;

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: () => 'deliver' });
  files = createServer((req, res) => {
    if (req.url === '/files/invoice.pdf') res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': PDF.length }).end(PDF);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesBase = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
const platform = usePlatform({
  env: () => ({ MAIL_DOMAIN: DOMAIN, SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off', SMTP_RELAY_URL: relay.url, ATTACHMENT_URL_ALLOWED_CIDRS: '127.0.0.1/32', ATTACHMENT_URL_TIMEOUT_MS: '5000' }),
  dns: [{ name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' }],
});
afterAll(async () => {
  await relay?.close();
  await new Promise((resolve) => files?.close(resolve));
});

type ToolAnswer = { isError?: boolean; content: { type: string; text?: string }[] };
const textOf = (answer: unknown) => (answer as ToolAnswer).content.map((c) => c.text ?? '').join('');
/** A tool's answer as JSON; a tool error fails the test with its text. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  if (answer.isError) throw new Error(`${name} failed: ${textOf(answer)}`);
  return JSON.parse(textOf(answer));
}

function stdioClient(apiKey: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_MAIN],
    env: { PATH: process.env.PATH ?? '', MAILROOM_API_KEY: apiKey, MAILROOM_BASE_URL: platform.url },
    stderr: 'pipe',
  });
  return connect(transport);
}

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const client = new Client({ name: 'mailroom-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** `mailroom-mcp --http` on a free port, once it says it listens. */
async function startHttpServer(): Promise<{ child: ChildProcess; endpoint: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [MCP_MAIN, '--http', '--port', String(port)], {
    env: { PATH: process.env.PATH ?? '', MAILROOM_BASE_URL: platform.url },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await waitFor(() => said.includes('listening on'), { timeoutMs: 10_000, what: `mailroom-mcp --http to listen (it said: ${said})` });
  return { child, endpoint: `http://127.0.0.1:${port}/mcp` };
}

const httpClient = (endpoint: string, apiKey: string) => connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));

/** Lists the tools, checks their schemas, and runs the loop: mail in over SMTP, read it, reply. */
async function agentLoop(client: Client, subject: string) {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_inboxes', 'create_inbox', 'list_messages', 'get_message', 'reply_to_message', 'send_message', 'get_attachment', 'upload_attachment', 'get_usage']));
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  for (const tool of tools) {
    expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
    expect(tool.description).toBeTruthy();
  }
  expect(tools.find((t) => t.name === 'reply_to_message')!.description).toContain('cannot be recalled');

  const inbox = await call(client, 'create_inbox', {});
  expect(inbox.address).toMatch(new RegExp(`@${DOMAIN.replace('.', '\\.')}$`));
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
    .sendMail({
      from: 'Ada <ada@sender.test>',
      to: inbox.address,
      subject,
      text: 'Where is my order?\n\n-- \nAda',
      attachments: [
        { filename: 'order.csv', content: 'sku,qty\nA1,2\n', contentType: 'text/csv' },
        { filename: 'label.pdf', content: PDF, contentType: 'application/pdf' },
      ],
    });

  const listed = await waitFor(
    async () => ((await call(client, 'list_messages', { inbox_id: inbox.inbox_id, limit: 10 })).data as { message_id: string; subject: string }[]).find((m) => m.subject === subject),
    { timeoutMs: 20_000, what: `${subject} in list_messages` },
  );
  const message = await call(client, 'get_message', { inbox_id: inbox.inbox_id, message_id: listed.message_id });
  expect(message).toMatchObject({ subject, from_address: 'ada@sender.test', extracted_text: expect.stringContaining('Where is my order?') });

  // Attachments: text as text, anything else as a signed link that downloads without the API key.
  const attachment = async (filename: string) => {
    const { attachment_id } = (message.attachments as { attachment_id: string; filename: string }[]).find((a) => a.filename === filename)!;
    return (await client.callTool({ name: 'get_attachment', arguments: { inbox_id: inbox.inbox_id, message_id: listed.message_id, attachment_id } })) as { isError?: boolean; content: any[] };
  };
  expect((await attachment('order.csv')).content).toEqual([{ type: 'text', text: 'sku,qty\nA1,2\n' }]);
  const pdf = JSON.parse(textOf(await attachment('label.pdf')));
  expect(pdf).toMatchObject({ filename: 'label.pdf', content_type: 'application/pdf', size: PDF.length, download_url: expect.stringMatching(/\/api\/v1\/downloads\//), expires_at: expect.any(String) });
  const download = await fetch(pdf.download_url);
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer()).equals(PDF)).toBe(true);
  const missing = (await client.callTool({ name: 'get_attachment', arguments: { inbox_id: inbox.inbox_id, message_id: listed.message_id, attachment_id: 'att_00000000000000000000000000' } })) as ToolAnswer;
  expect(JSON.parse(textOf(missing)).error).toMatchObject({ code: 'not_found', fix: expect.any(String) });

  const args = { inbox_id: inbox.inbox_id, message_id: listed.message_id, text_body: 'It ships today.', idempotency_key: `reply-${listed.message_id}` };
  const reply = await call(client, 'reply_to_message', args);
  expect(reply.message_id).toMatch(/^msg_/);
  // The same key again: the first answer, nothing sent twice.
  expect(await call(client, 'reply_to_message', args)).toEqual(reply);
  await waitFor(() => relay.received.find((m) => m.rcptTo.includes('ada@sender.test') && m.raw.includes(`Subject: Re: ${subject}`)), { timeoutMs: 20_000, what: 'the reply at the relay' });
  expect(relay.received.filter((m) => m.raw.includes(`Subject: Re: ${subject}`))).toHaveLength(1);

  const raw = (await client.callTool({ name: 'get_raw_message', arguments: { inbox_id: inbox.inbox_id, message_id: listed.message_id } })) as ToolAnswer;
  expect(raw.isError).toBeFalsy();
  expect(textOf(raw)).toContain(`Subject: ${subject}`);
  // A source over 256 KiB (a large attachment) is a signed link, not text in the model's context.
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
    .sendMail({ from: 'ada@sender.test', to: inbox.address, subject: `${subject}: big`, text: 'A big file.', attachments: [{ filename: 'big.bin', content: Buffer.alloc(300_000, 7) }] });
  const big = await waitFor(
    async () => ((await call(client, 'list_messages', { inbox_id: inbox.inbox_id, limit: 10 })).data as { message_id: string; subject: string }[]).find((m) => m.subject === `${subject}: big`),
    { timeoutMs: 20_000, what: 'the big message in list_messages' },
  );
  const bigRaw = await call(client, 'get_raw_message', { inbox_id: inbox.inbox_id, message_id: big.message_id });
  expect(bigRaw).toMatchObject({ size: expect.any(Number), download_url: expect.stringMatching(/\/api\/v1\/downloads\//), note: expect.stringContaining('256 KiB') });
  expect(bigRaw.size).toBeGreaterThan(300_000);
  const bigDownload = await fetch(bigRaw.download_url);
  expect(bigDownload.status).toBe(200);
  expect((await bigDownload.text()).length).toBe(bigRaw.size);

  // A send with a file by URL (fetched by the server) and an uploaded one (by its id).
  const uploaded = await call(client, 'upload_attachment', { filename: 'notes.csv', content_type: 'text/csv', content_text: 'day,boxes\nmon,3\n' });
  expect(uploaded).toMatchObject({ attachment_id: expect.stringMatching(/^att_/), filename: 'notes.csv', content_type: 'text/csv', size: 16 });
  const to = `files-${inbox.inbox_id}@sender.test`;
  const sent = await call(client, 'send_message', {
    inbox_id: inbox.inbox_id,
    to,
    subject: `${subject}: files`,
    text_body: 'Two files.',
    attachments: [{ url: `${filesBase}/files/invoice.pdf` }, { attachment_id: uploaded.attachment_id }],
    idempotency_key: `files-${inbox.inbox_id}`,
  });
  expect(sent.message_id).toMatch(/^msg_/);
  const out = await waitFor(() => relay.received.find((m) => m.rcptTo.includes(to)), { timeoutMs: 30_000, what: 'the send with files at the relay' });
  const files = (await simpleParser(out.raw)).attachments.map((a) => [a.filename, a.contentType, a.content.toString('base64')]);
  expect(files).toEqual([
    ['invoice.pdf', 'application/pdf', PDF.toString('base64')],
    ['notes.csv', 'text/csv', Buffer.from('day,boxes\nmon,3\n').toString('base64')],
  ]);
}

describe('the MCP server', () => {
  it('over stdio: lists valid tools and runs the agent loop', async () => {
    const client = await stdioClient(platform.tenant.key);
    try {
      await agentLoop(client, 'Order 7 (stdio)');
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP: the same, with the API key as bearer token; no key is a 401', async () => {
    const { child, endpoint } = await startHttpServer();
    try {
      const client = await httpClient(endpoint, platform.tenant.key);
      try {
        await agentLoop(client, 'Order 8 (http)');
      } finally {
        await client.close();
      }
      const anonymous = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      expect(anonymous.status).toBe(401);
      // A wrong key: the protocol works, each tool answers unauthorized with a fix.
      const stranger = await httpClient(endpoint, 'mr_not_a_key');
      try {
        const answer = (await stranger.callTool({ name: 'list_inboxes', arguments: {} })) as ToolAnswer;
        expect(answer.isError).toBe(true);
        expect(JSON.parse(textOf(answer)).error).toMatchObject({ code: 'unauthorized', fix: expect.stringContaining('API key') });
      } finally {
        await stranger.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('runs the management tools: inboxes, threads, labels, suppressions, webhook endpoints, usage', async () => {
    const client = await stdioClient(platform.tenant.key);
    try {
      const inbox = await call(client, 'create_inbox', { username: 'manage', display_name: 'Manage' });
      expect(await call(client, 'get_inbox', { id: inbox.inbox_id })).toMatchObject({ inbox_id: inbox.inbox_id, display_name: 'Manage' });
      expect(await call(client, 'update_inbox', { id: inbox.inbox_id, display_name: 'Managed' })).toMatchObject({ display_name: 'Managed' });
      expect((await call(client, 'list_inboxes', { limit: 100 })).data.map((i: { inbox_id: string }) => i.inbox_id)).toContain(inbox.inbox_id);

      const sent = await call(client, 'send_message', { inbox_id: inbox.inbox_id, to: 'lee@sender.test', subject: 'Labels', text_body: 'x' });
      expect((await call(client, 'list_threads', { inbox_id: inbox.inbox_id })).data).toEqual([expect.objectContaining({ thread_id: sent.thread_id })]);
      expect(await call(client, 'get_thread', { inbox_id: inbox.inbox_id, thread_id: sent.thread_id })).toMatchObject({ thread_id: sent.thread_id });
      await call(client, 'add_message_labels', { id: sent.message_id, labels: ['todo'] });
      await call(client, 'add_thread_labels', { id: sent.thread_id, labels: ['vip'] });
      expect((await call(client, 'list_messages', { inbox_id: inbox.inbox_id, label: 'todo' })).data.map((m: { message_id: string }) => m.message_id)).toEqual([sent.message_id]);
      expect((await call(client, 'list_labels', {})).data.map((l: { label: string }) => l.label)).toEqual(expect.arrayContaining(['todo', 'vip']));
      await call(client, 'remove_message_labels', { id: sent.message_id, labels: ['todo'] });
      await call(client, 'remove_thread_labels', { id: sent.thread_id, labels: ['vip'] });
      expect((await call(client, 'list_messages', { inbox_id: inbox.inbox_id, label: 'todo' })).data).toEqual([]);

      await call(client, 'add_suppression', { address: 'gone@sender.test' });
      expect((await call(client, 'list_suppressions', {})).data).toEqual(expect.arrayContaining([expect.objectContaining({ address: 'gone@sender.test', reason: 'manual' })]));
      const refused = (await client.callTool({ name: 'send_message', arguments: { inbox_id: inbox.inbox_id, to: 'gone@sender.test', subject: 'x', text_body: 'x' } })) as ToolAnswer;
      expect(JSON.parse(textOf(refused)).error).toMatchObject({ code: 'blocked_recipient', fix: expect.stringContaining('suppression') });
      await call(client, 'delete_suppression', { address: 'gone@sender.test' });
      expect((await call(client, 'list_suppressions', {})).data).toEqual([]);

      const endpoint = await call(client, 'create_webhook_endpoint', { url: 'https://hooks.example.com/mailroom', events: ['domain.verified'] });
      expect(endpoint.secret).toMatch(/^whsec_/);
      expect((await call(client, 'list_webhook_endpoints', {})).data.map((e: { id: string }) => e.id)).toContain(endpoint.id);
      expect(await call(client, 'list_webhook_deliveries', { id: endpoint.id })).toEqual({ data: [], next_page_token: null });
      await call(client, 'delete_webhook_endpoint', { id: endpoint.id });

      expect(await call(client, 'get_usage', {})).toMatchObject({ org_id: platform.tenant.org_id, usage: { inboxes: expect.objectContaining({ used: expect.any(Number) }) } });
      await call(client, 'delete_inbox', { id: inbox.inbox_id });
      const gone = (await client.callTool({ name: 'get_inbox', arguments: { id: inbox.inbox_id } })) as ToolAnswer;
      expect(JSON.parse(textOf(gone)).error).toMatchObject({ code: 'not_found' });
    } finally {
      await client.close();
    }
  });

  it("answers every tool's failure with the API's code and a fix", async () => {
    const client = await stdioClient(platform.tenant.key);
    try {
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const schema = tool.inputSchema as { properties?: Record<string, unknown>; required?: string[] };
        // Ids that exist nowhere (404 or 400), a limit out of range (400), or else an argument the tool does not take.
        const args: Record<string, unknown> = Object.fromEntries((schema.required ?? []).map((name) => [name, name.endsWith('id') ? 'zz_missing' : 'x']));
        if (schema.properties?.limit) args.limit = 1000;
        if (!Object.keys(args).length) args.not_an_argument = true;
        const answer = (await client.callTool({ name: tool.name, arguments: args })) as ToolAnswer;
        expect([tool.name, answer.isError]).toEqual([tool.name, true]);
        const { error } = JSON.parse(textOf(answer)) as { error: { code: string; message: string; fix: string } };
        expect([tool.name, error]).toEqual([tool.name, expect.objectContaining({ code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String), fix: expect.any(String) })]);
        expect(error.fix.length).toBeGreaterThan(10);
        // A tool given its required arguments reaches the API, and says what the API said.
        // (upload_attachment checks its own arguments first: a file name and no content is one of its invalid_arguments.)
        if (schema.required?.length && tool.name !== 'upload_attachment') expect([tool.name, error.code]).not.toEqual([tool.name, 'invalid_arguments']);
      }
      const unknown = (await client.callTool({ name: 'no_such_tool', arguments: {} })) as ToolAnswer;
      expect(JSON.parse(textOf(unknown)).error).toMatchObject({ code: 'unknown_tool', fix: expect.stringContaining('tools/list') });
    } finally {
      await client.close();
    }
  });
});
