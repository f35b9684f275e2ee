/**
 * `npm start` as a user runs it, on ports and a data directory of its own: the launcher
 * brings up its own PostgreSQL and NATS, the platform answers over HTTP and SMTP, a SIGTERM
 * leaves no process and no port behind, and after a kill -9 the next start stops the
 * orphans and comes back with the data kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import nodemailer from 'nodemailer';

const ROOT = resolve(__dirname, '..', '..', '..');
const LAUNCHER = join(ROOT, 'apps', 'launcher', 'dist', 'main.js');

jest.setTimeout(180_000);

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Launch {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

let dataDir: string;
let env: NodeJS.ProcessEnv;
let ports: { postgres: number; nats: number; http: number; smtp: number };
const launched: Launch[] = [];

function launch(): Launch {
  const child = spawn(process.execPath, [LAUNCHER, 'start'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const l = { child, stderr: () => err, exited };
  launched.push(l);
  return l;
}

const ready = (l: Launch) => until('the banner', () => (l.stderr().includes('Mailroom is running') ? true : undefined));

function records(): { name: string; pid: number }[] {
  const dir = join(dataDir, 'run');
  return readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { name: string; pid: number });
}

async function api<T>(path: string, init: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://127.0.0.1:${ports.http}/api/v1${path}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

const USER = { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailroom-launcher-'));
  ports = { postgres: await freePort(), nats: await freePort(), http: await freePort(), smtp: await freePort() };
  // What a user's shell has: none of the test run's server variables.
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TEST_)?(DATABASE_URL|NATS_URL|RSPAMD_URL)$/.test(k) && !k.startsWith('MAILROOM_') && k !== 'NODE_OPTIONS'));
  Object.assign(env, {
    MAILROOM_DATA_DIR: dataDir,
    MAILROOM_POSTGRES_PORT: String(ports.postgres),
    MAILROOM_NATS_PORT: String(ports.nats),
    MAILROOM_RSPAMD: 'off',
    HTTP_PORT: String(ports.http),
    SMTP_PORT: String(ports.smtp),
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
  });
});

afterAll(async () => {
  for (const l of launched) if (l.child.exitCode === null) l.child.kill('SIGKILL');
  // Whatever a failed test left: the launcher's own stop command cleans it.
  await new Promise((r) => spawn(process.execPath, [LAUNCHER, 'stop'], { cwd: ROOT, env, stdio: 'ignore' }).once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
});

it('starts its own servers, serves HTTP and SMTP, and a SIGTERM leaves nothing running', async () => {
  const first = launch();
  await ready(first);
  expect(first.stderr()).toContain(`PostgreSQL: 127.0.0.1:${ports.postgres} (started here`);
  expect(first.stderr()).toContain('rspamd: off');

  const signup = await api<{ access_token: string }>('/auth/signup', { body: USER });
  expect(signup.status).toBe(201);
  const key = await api<{ key: string }>('/keys', { token: signup.body.access_token, body: { name: 'agent' } });
  expect((await api('/org', { token: key.body.key })).status).toBe(200);
  const inbox = await api<{ inbox_id: string; address: string }>('/inboxes', { token: key.body.key, body: { username: 'support' } });
  expect(inbox.status).toBe(201);
  const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: ports.smtp, secure: false, ignoreTLS: true });
  await smtp.sendMail({ from: 'grace@example.com', to: inbox.body.address, subject: 'hello', text: 'Is this thing on?' });
  smtp.close();
  await until('the mail in the inbox', async () => {
    const list = await api<{ data: unknown[] }>(`/inboxes/${inbox.body.inbox_id}/messages`, { token: key.body.key });
    return list.body.data.length === 1 ? true : undefined;
  });

  const pids = records().map((r) => r.pid);
  expect(records().map((r) => r.name).sort()).toEqual(['nats', 'platform', 'postgres']);
  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  for (const pid of pids) expect(alive(pid)).toBe(false);
  for (const port of Object.values(ports)) expect(await answers(port)).toBe(false);
  expect(readdirSync(join(dataDir, 'run'))).toEqual([]);
});

it('after a kill -9, the next start stops the orphans and comes back with the data kept', async () => {
  const killed = launch();
  await ready(killed);
  const orphans = records();
  killed.child.kill('SIGKILL');
  await killed.exited;
  // The platform and the servers outlive their launcher...
  for (const { pid } of orphans) expect(alive(pid)).toBe(true);

  const next = launch();
  await ready(next);
  // ...until the next start stops them and starts its own.
  for (const { name, pid } of orphans) expect(next.stderr()).toContain(`stopping ${name} (pid ${pid}) left running`);
  for (const { pid } of orphans) expect(alive(pid)).toBe(false);
  const login = await api<{ access_token: string }>('/auth/login', { body: { email: USER.email, password: USER.password } });
  expect(login.status).toBe(200);

  next.child.kill('SIGINT');
  expect(await next.exited).toBe(0);
  for (const port of Object.values(ports)) expect(await answers(port)).toBe(false);
});
