/**
 * The `mailroom` CLI (apps/cli, built) as a script runs it: a subprocess with --json, its
 * config in a temporary directory. It logs in (the key on stdin, stored 0600), creates and
 * lists inboxes, and `webhook-listen` verifies a real message.received delivery of mail that
 * arrived over SMTP; the message is listed, read (extracted_text) and answered, a new message
 * is sent; the thread, the endpoint's deliveries and the API keys are managed; bash completes
 * with the script `completion bash` prints; and failures end with the documented exit codes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const CLI_MAIN = path.resolve(__dirname, '../../cli/dist/main.js');
const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;
let configDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: () => 'deliver' });
  configDir = mkdtempSync(path.join(tmpdir(), 'mailroom-cli-int-'));
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
  for (const child of children) child.kill();
  await relay?.close();
  rmSync(configDir, { recursive: true, force: true });
});

/** The CLI's environment: its own config dir, and no credentials unless given. */
const cliEnv = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', MAILROOM_CONFIG_DIR: configDir, ...extra });

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mailroom ...args` to its end (stdin given, then closed). */
function mailroom(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: cliEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Runs a --json command that must succeed, and answers its one JSON document. */
async function json(...args: string[]): Promise<any> {
  return jsonAs({}, ...args);
}

/** The same with extra environment (MAILROOM_API_KEY: a user access token for what keys cannot do). */
async function jsonAs(env: Record<string, string>, ...args: string[]): Promise<any> {
  const run = await mailroom([...args, '--json'], { env });
  if (run.code !== 0) throw new Error(`mailroom ${args.join(' ')} exited ${run.code}: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe('the mailroom CLI', () => {
  it('logs in, manages inboxes, verifies a real webhook delivery, reads, replies and sends', async () => {
    const login = await mailroom(['login', '--base-url', platform.url, '--json'], { stdin: `${platform.tenant.key}\n` });
    expect(login.code).toBe(0);
    expect(login.stdout).not.toContain(platform.tenant.key);
    const { config_file } = JSON.parse(login.stdout);
    expect(config_file).toBe(path.join(configDir, 'config.json'));
    expect(statSync(config_file).mode & 0o777).toBe(0o600);

    const inbox = await json('inboxes', 'create', '--username', 'cli', '--display-name', 'CLI');
    expect(inbox).toMatchObject({ inbox_id: expect.stringMatching(/^inb_/), address: `cli@${DOMAIN}` });
    const inboxes = await json('inboxes', 'list');
    expect(Array.isArray(inboxes)).toBe(true);
    expect(inboxes.map((i: { inbox_id: string }) => i.inbox_id)).toContain(inbox.inbox_id);

    // webhook-listen on a known port, registered as an endpoint (loopback allowed by WEBHOOK_ALLOWED_CIDRS).
    const port = await freePort();
    const endpoint = await json('webhooks', 'create', '--url', `http://127.0.0.1:${port}/`, '--events', 'message.received', 'message.sent');
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listener = spawn(process.execPath, [CLI_MAIN, 'webhook-listen', '--port', String(port), '--json'], { env: cliEnv({ MAILROOM_WEBHOOK_SECRET: endpoint.secret }) });
    children.push(listener);
    let printed = '';
    let listening = '';
    listener.stdout.on('data', (c: Buffer) => (printed += c.toString()));
    listener.stderr.on('data', (c: Buffer) => (listening += c.toString()));
    await waitFor(() => listening.includes(`listening on http://127.0.0.1:${port}/`) || undefined, { timeoutMs: 10_000, what: 'webhook-listen listening' });

    // tail follows the inbox from now on, polling every second.
    const tail = spawn(process.execPath, [CLI_MAIN, 'tail', inbox.inbox_id, '--interval', '1', '--json'], { env: cliEnv() });
    children.push(tail);
    let tailed = '';
    let tailNote = '';
    tail.stdout.on('data', (c: Buffer) => (tailed += c.toString()));
    tail.stderr.on('data', (c: Buffer) => (tailNote += c.toString()));
    // What the inbox holds at tail's first poll is not news: the mail goes after it.
    await waitFor(() => tailNote.includes('following') || undefined, { timeoutMs: 10_000, what: 'tail following the inbox' });

    await nodemailer
      .createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
      .sendMail({ from: 'Ada <ada@sender.test>', to: inbox.address, subject: 'Order 7', text: 'Where is my order?' });

    const lines = () => printed.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { verified: boolean; event?: { type: string; data: Record<string, unknown> } });
    const received = await waitFor(() => lines().find((l) => l.verified && l.event?.type === 'message.received' && l.event.data.inbox_id === inbox.inbox_id), {
      timeoutMs: 20_000,
      what: 'webhook-listen printing a verified message.received',
    });
    const messageId = String(received.event!.data.message_id);
    expect(lines().every((l) => l.verified)).toBe(true);
    const tailLine = await waitFor(() => tailed.split('\n').find((l) => l.includes(messageId)), { timeoutMs: 10_000, what: 'tail printing the new message' });
    expect(JSON.parse(tailLine)).toMatchObject({ type: 'message.received', data: { message_id: messageId, subject: 'Order 7' } });

    const messages = await json('messages', 'list', inbox.inbox_id);
    expect(messages).toEqual([expect.objectContaining({ message_id: messageId, subject: 'Order 7', from_address: 'ada@sender.test' })]);
    const message = await json('messages', 'get', inbox.inbox_id, messageId);
    expect(message.extracted_text).toContain('Where is my order?');

    const reply = await json('reply', inbox.inbox_id, messageId, '--text', 'It ships today.');
    expect(reply).toMatchObject({ message_id: expect.stringMatching(/^msg_/), thread_id: received.event!.data.thread_id });
    await waitFor(() => lines().find((l) => l.event?.type === 'message.sent' && l.event.data.message_id === reply.message_id), { timeoutMs: 20_000, what: 'a verified message.sent' });

    const sent = await json('send', inbox.inbox_id, '--to', 'bob@elsewhere.test', '--subject', 'Hello', '--text', 'A new thread.');
    expect(sent).toMatchObject({ message_id: expect.stringMatching(/^msg_/), thread_id: expect.stringMatching(/^thr_/) });
    await waitFor(() => relay.received.some((m) => m.rcptTo.includes('bob@elsewhere.test')) || undefined, { timeoutMs: 20_000, what: 'the send at the relay' });

    const threads = await json('threads', 'list', inbox.inbox_id);
    expect(threads).toHaveLength(2);
    const thread = await json('threads', 'get', inbox.inbox_id, String(received.event!.data.thread_id));
    expect(thread).toMatchObject({ thread_id: received.event!.data.thread_id });

    // The endpoint's delivery records, then the endpoint gone.
    const deliveries = await json('webhooks', 'deliveries', endpoint.id);
    expect(deliveries).toEqual(expect.arrayContaining([expect.objectContaining({ event_type: 'message.received', status: 'delivered', http_status: 200 })]));
    expect((await json('webhooks', 'list')).map((e: { id: string }) => e.id)).toContain(endpoint.id);
    expect(await json('webhooks', 'delete', endpoint.id)).toEqual({ ok: true, id: endpoint.id });
    expect((await json('webhooks', 'list')).map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
  });

  it('creates, lists and revokes API keys (as a person: keys cannot manage keys); bash completes with the script it prints', async () => {
    const owner = { MAILROOM_API_KEY: platform.tenant.accessToken };
    const key = await jsonAs(owner, 'keys', 'create', '--name', 'ci', '--scope', 'read_only');
    expect(key).toMatchObject({ id: expect.stringMatching(/^key_/), name: 'ci', scope: 'read_only', key: expect.stringMatching(/^mr_/) });
    expect((await jsonAs(owner, 'keys', 'list')).find((k: { id: string }) => k.id === key.id)).toMatchObject({ name: 'ci', scope: 'read_only' });
    expect((await mailroom(['inboxes', 'list', '--json'], { env: { MAILROOM_API_KEY: key.key } })).code).toBe(0);
    expect((await jsonAs(owner, 'keys', 'list')).find((k: { id: string }) => k.id === key.id)).not.toHaveProperty('key');
    expect(await jsonAs(owner, 'keys', 'revoke', key.id)).toEqual({ ok: true, id: key.id });
    await waitFor(async () => (await mailroom(['inboxes', 'list', '--json'], { env: { MAILROOM_API_KEY: key.key } })).code === 2 || undefined, { timeoutMs: 5_000, what: 'the revoked key refused' });

    const script = await mailroom(['completion', 'bash']);
    expect(script.code).toBe(0);
    const complete = (words: string[]) =>
      new Promise<string>((resolve, reject) => {
        const bash = spawn('bash', ['-c', `eval "$COMPLETION"; COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _mailroom_complete; echo "\${COMPREPLY[*]}"`], { env: { PATH: process.env.PATH ?? '', COMPLETION: script.stdout } });
        let out = '';
        bash.stdout.on('data', (c: Buffer) => (out += c.toString()));
        bash.on('error', reject);
        bash.on('close', () => resolve(out.trim()));
      });
    expect((await complete(['mailroom', 'ke'])).split(' ')).toEqual(['keys']);
    expect((await complete(['mailroom', 'keys', 'r'])).split(' ')).toEqual(['revoke']);
    expect((await complete(['mailroom', 'webhooks', 'create', '--ur'])).split(' ')).toEqual(['--url']);
  });

  it('ends with the documented exit codes, the API error as JSON', async () => {
    const inbox = await json('inboxes', 'create');
    const missing = await mailroom(['messages', 'get', inbox.inbox_id, 'msg_00000000000000000000000000', '--json']);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toEqual({ error: expect.objectContaining({ code: 'not_found', request_id: expect.any(String) }) });

    const invalid = await mailroom(['inboxes', 'create', '--display-name', 'bad<name>', '--json']);
    expect(invalid.code).toBe(4);
    expect(JSON.parse(invalid.stdout).error.code).toBe('invalid_request');

    // MAILROOM_API_KEY wins over the stored key.
    const unauthorized = await mailroom(['inboxes', 'list', '--json'], { env: { MAILROOM_API_KEY: 'mr_not_a_key' } });
    expect(unauthorized.code).toBe(2);

    const usage = await mailroom(['inboxes', 'frobnicate']);
    expect(usage.code).toBe(1);
    const network = await mailroom(['inboxes', 'list', '--json'], { env: { MAILROOM_BASE_URL: 'http://127.0.0.1:9' } });
    expect(network.code).toBe(6);
  });
});
