/**
 * A nats-server of a test's own, for what the shared one cannot show (TLS, other
 * authorization): started from a configuration text in a temporary directory, on a free
 * port, and removed with its directory by stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { freePort } from './net';
import { executable, findProgram } from './programs';

export interface OwnNatsServer {
  port: number;
  /** Its directory: the configuration, the JetStream store, and whatever the caller put there. */
  dir: string;
  /** Everything the server logged so far (for a failure's message). */
  log(): string;
  /** Has it read its configuration again (SIGHUP), as an operator does after changing it. */
  reload(): Promise<void>;
  /** Stops the server and removes its directory; safe to call more than once. */
  stop(): Promise<void>;
}

/** MAILROOM_NATS_SERVER, else nats-server on PATH, else Debian's /usr/sbin/nats-server. */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MAILROOM_NATS_SERVER) {
    if (!executable(env.MAILROOM_NATS_SERVER)) throw new Error(`MAILROOM_NATS_SERVER=${env.MAILROOM_NATS_SERVER} is not an executable file`);
    return env.MAILROOM_NATS_SERVER;
  }
  return findProgram('nats-server', {
    fallbacks: ['/usr/sbin/nats-server'],
    install: 'install it (Debian: apt-get install nats-server) or set MAILROOM_NATS_SERVER to its path',
    env,
  });
}

/** A temporary directory for a server's files, created before the configuration that names them. */
export function natsServerDir(): string {
  return mkdtempSync(join(tmpdir(), 'mailroom-nats-'));
}

/**
 * Starts nats-server with `config(port, dir)` (the listen address and JetStream store are the
 * caller's to write), written to `opts.file` in the directory (default nats.conf; a file in a
 * folder of its own lets the configuration include siblings by relative path), and resolves
 * once it logs that it is ready. The directory (`opts.dir`, else a new one) is the server's
 * from then on: removed by stop(), or here if it fails to start.
 */
export async function startOwnNatsServer(
  config: (port: number, dir: string) => string,
  opts: { dir?: string; file?: string; env?: NodeJS.ProcessEnv; readyTimeoutMs?: number } = {},
): Promise<OwnNatsServer> {
  const dir = opts.dir ?? natsServerDir();
  let binary: string;
  try {
    binary = natsServerBinary();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const port = await freePort();
  const file = join(dir, opts.file ?? 'nats.conf');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, config(port, dir));
  const child = spawn(binary, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // 'error' without 'exit' when it could not be started at all.
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let stopped: Promise<void> | undefined;
  const server: OwnNatsServer = {
    port,
    dir,
    log: () => output,
    reload: async () => {
      const before = output.length;
      child.kill('SIGHUP');
      await waitUntilLogged(() => output.slice(before), /Reloaded server configuration|reloaded/i);
    },
    stop: () => (stopped ??= stopServer(child, exited).finally(() => rmSync(dir, { recursive: true, force: true }))),
  };
  try {
    await ready(child, () => output, opts.readyTimeoutMs ?? 10_000);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

async function waitUntilLogged(output: () => string, line: RegExp, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!line.test(output())) {
    if (Date.now() > deadline) throw new Error(`nats-server did not log ${line} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function ready(child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
      child.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const check = () => {
      if (output().includes('Server is ready')) done();
    };
    const onExit = (code: number | null) => done(new Error(`nats-server exited (${code}) before it was ready:\n${output()}`));
    const timer = setTimeout(() => done(new Error(`nats-server not ready after ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    child.stderr?.on('data', check);
    child.once('exit', onExit);
    child.once('error', done);
    check();
  });
}

async function stopServer(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}

/**
 * The line that makes a test's own server trust the run's operator (TEST_NATS_AUTH_DIR), so
 * it refuses anonymous clients and admits the credentials test contexts mint, as the shared
 * server does. nats-server resolves an include against the including file's directory.
 */
export function operatorInclude(configDir: string): string {
  const auth = process.env.TEST_NATS_AUTH_DIR;
  if (!auth) throw new Error('TEST_NATS_AUTH_DIR is not set: run the tests with `npm test`');
  return `include ${JSON.stringify(relative(configDir, join(auth, 'nats-auth.conf')))}`;
}

/** Writes `<dir>/server.conf` for a server on 127.0.0.1:<port> with the run's operator and JetStream in `dir`. */
export function natsServerConfig(opts: { dir: string; port: number }): string {
  const file = join(opts.dir, 'server.conf');
  writeFileSync(file, [`listen: 127.0.0.1:${opts.port}`, `jetstream { store_dir: ${JSON.stringify(opts.dir)} }`, 'authorization { timeout: 10 }', operatorInclude(opts.dir), ''].join('\n'));
  return file;
}
