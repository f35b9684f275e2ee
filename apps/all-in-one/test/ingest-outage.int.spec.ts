/**
 * The SMTP edge when its dependencies fail: with NATS or PostgreSQL gone, senders hear
 * 451 (try later) and nothing is stored half-way; mail accepted before a database outage
 * is stored once the database is back. This file runs its own nats-server, which it
 * kills, and makes its own database refuse connections; it never touches the shared ones.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { RawSmtp, freePort, natsServerBinary, natsServerConfig, waitFor, withDatabase } from '@mailroom/testing';
import { usePlatform, type PlatformFixture } from './fixtures';

const DOMAIN = 'outage.test';

let nats: ChildProcess | undefined;
let natsPort: number;
const natsDir = mkdtempSync(path.join(tmpdir(), 'mr-nats-'));

async function startNats(): Promise<void> {
  nats = spawn(natsServerBinary(), ['-c', natsServerConfig({ dir: natsDir, port: natsPort })], { stdio: 'ignore' });
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const socket: Socket = connect(natsPort, '127.0.0.1');
        socket.once('connect', () => (socket.destroy(), resolve(true)));
        socket.once('error', () => resolve(false));
      }),
    { what: 'nats-server to listen' },
  );
}

async function stopNats(): Promise<void> {
  const proc = nats;
  nats = undefined;
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

/** Started in the describe block. */
let mailroom: PlatformFixture;

async function transaction(rcpt: string, subject: string): Promise<number[]> {
  const conn = await RawSmtp.connect(mailroom.smtpPort);
  const codes = [(await conn.reply()).code];
  for (const cmd of ['EHLO mail.sender.test', 'MAIL FROM:<ada@sender.test>', `RCPT TO:<${rcpt}>`]) {
    const r = await conn.command(cmd);
    codes.push(r.code);
    if (r.code >= 400) {
      conn.close();
      return codes;
    }
  }
  const data = await conn.command('DATA');
  codes.push(data.code);
  if (data.code === 354) {
    await conn.write(`From: ada@sender.test\r\nSubject: ${subject}\r\n\r\nbody\r\n.\r\n`);
    codes.push((await conn.reply()).code);
  }
  conn.close();
  return codes;
}

async function subjects(inboxId: string): Promise<string[]> {
  const res = await mailroom.api.get(`/api/v1/inboxes/${inboxId}/messages`);
  return (res.body.data as { subject: string }[]).map((m) => m.subject).sort();
}

describe('with a dependency down', () => {
  beforeAll(async () => {
    natsPort = await freePort();
    await startNats();
  });
  mailroom = usePlatform({ env: () => ({ NATS_URL: `nats://127.0.0.1:${natsPort}`, MAIL_DOMAIN: DOMAIN, RSPAMD_URL: 'off', RCPT_CACHE_TTL_MS: '0', RPC_TIMEOUT_MS: '1000' }) });
  const { api, env } = mailroom;
  // Once the platform has stopped.
  afterAll(stopNats);

  it('answers 451 while NATS is down, stores nothing, and works again once it is back', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'nats' })).body;
    expect(await transaction(inbox.address, 'before')).toEqual([220, 250, 250, 250, 354, 250]);
    await waitFor(async () => (await subjects(inbox.inbox_id)).length === 1);

    await stopNats();
    const during = await transaction(inbox.address, 'during');
    expect(during.at(-1)).toBe(451);

    await startNats();
    // The services reconnect on their own; the sender's retry then succeeds.
    await waitFor(async () => (await transaction(inbox.address, 'after')).at(-1) === 250, { timeoutMs: 30_000, intervalMs: 500 });
    await waitFor(async () => (await subjects(inbox.inbox_id)).includes('after'), { timeoutMs: 20_000 });
    expect(await subjects(inbox.inbox_id)).toEqual(['after', 'before']);
  });

  it('answers 451 at RCPT while the database is unreachable, and stores what it had accepted once it is back', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'pg' })).body;
    const dbName = new URL(env.DATABASE_URL!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: withDatabase(env.DATABASE_URL!, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`alter database "${dbName}" with allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
      const refused = await transaction(inbox.address, 'during outage');
      expect(refused.at(-1)).toBe(451);
      expect(refused).toHaveLength(4); // 451 at RCPT: the sender keeps the message
    } finally {
      await admin.query(`alter database "${dbName}" with allow_connections true`);
      await admin.end();
    }
    await waitFor(async () => (await transaction(inbox.address, 'after outage')).at(-1) === 250, { timeoutMs: 20_000, intervalMs: 500 });
    await waitFor(async () => (await subjects(inbox.inbox_id)).includes('after outage'), { timeoutMs: 20_000 });
    expect(await subjects(inbox.inbox_id)).toEqual(['after outage']);
  });
});
