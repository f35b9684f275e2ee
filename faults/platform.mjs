// Mailroom's services as separate processes (node services/<name>/dist/main.js, as deployed),
// any number of instances of each, every one on ports of its own; an instance can be killed
// with SIGKILL and started again with the same settings. Also the campaign's two edges: an
// SMTP relay sink that records what mail-send hands it, and webhook receivers that verify
// each delivery's signature and record the event ids.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { verifySignature, waitFor } from '@mailroom/testing';
import { adopt, portAnswers } from './servers.mjs';
import { cpuOf } from '../bench/cpu.mjs';

const root = join(import.meta.dirname, '..');

/** Instances that exited when nobody stopped them: { name, code, at, pid }. */
export const crashes = [];

/**
 * One instance: `start()` resolves once it logged "started" (its bus subscriptions in place,
 * its listeners open); `kill()` is kill -9 and resolves once it is gone.
 */
export class Instance {
  constructor(service, index, env, logDir) {
    this.service = service;
    this.index = index;
    this.env = env;
    this.name = `${service}#${index + 1}`;
    this.log = createWriteStream(join(logDir, `${service}-${index + 1}.log`), { flags: 'a' });
    this.child = undefined;
    this.exited = undefined;
    /** CPU seconds of the instances of this slot that were killed (a restart is a new pid). */
    this.cpuOfDead = 0;
  }

  /** Started, and its /readyz answering 200 (after "started", the health server opens). */
  async start() {
    await this.launch();
    if (this.env.HEALTH_PORT) await waitFor(async () => (this.alive ? ready(Number(this.env.HEALTH_PORT)) : Promise.reject(new Error(`${this.name} exited after it started: see its log`))), { timeoutMs: 120_000, intervalMs: 100, what: `${this.name} ready` });
    return this;
  }

  launch() {
    this.killing = false;
    const child = adopt(spawn(process.execPath, [join(root, 'services', this.service, 'dist', 'main.js')], { env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    child.stderr.pipe(this.log, { end: false });
    // An exit nobody asked for (not kill() or stop()) is a crash: recorded for the summary.
    child.once('exit', (code, signal) => {
      if (this.killing) return;
      crashes.push({ name: this.name, code: code ?? signal, at: Date.now(), pid: child.pid });
      process.stderr.write(`faults: ${this.name} (pid ${child.pid}) exited by itself (${code ?? signal}): see ${this.log.path}\n`);
    });
    return new Promise((resolve, reject) => {
      let buf = '';
      const onData = (d) => {
        this.log.write(d);
        if (buf === null) return;
        buf += d;
        if (buf.includes('"msg":"started"')) {
          buf = null;
          resolve(this);
        } else buf = buf.slice(-8192);
      };
      child.stdout.on('data', onData);
      child.once('exit', (code, signal) => reject(new Error(`${this.name} exited (${code ?? signal}) before it started: see its log`)));
    });
  }

  get alive() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  cpu() {
    return this.cpuOfDead + (this.alive ? cpuOf(this.child.pid) : 0);
  }

  async kill(signal = 'SIGKILL') {
    if (!this.alive) return;
    this.killing = true;
    this.cpuOfDead += cpuOf(this.child.pid);
    this.child.kill(signal);
    await this.exited;
  }
}

/**
 * The platform: `counts` gives the instances of each service, `ports(service, index)` each
 * instance's own settings (HTTP_PORT, SMTP_PORT, HEALTH_PORT); instances are numbered from
 * `first`. Instances of one service start together (the migrations run under an advisory
 * lock), services in the order given.
 */
export async function startPlatform(env, counts, ports, logDir, first = 0) {
  const instances = [];
  for (const [service, n] of Object.entries(counts)) {
    const mine = Array.from({ length: n }, (_, k) => new Instance(service, first + k, { ...env, ...ports(service, first + k) }, logDir));
    instances.push(...mine);
    await Promise.all(mine.map((inst) => inst.start()));
  }
  return {
    instances,
    of: (service) => instances.filter((i) => i.service === service),
    async stop() {
      await Promise.all(instances.map((i) => i.kill('SIGTERM')));
    },
  };
}

/** Whether an instance's /readyz answers 200 (its database and bus checks pass). */
export async function ready(healthPort) {
  try {
    const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * The provider's relay: accepts every message and records, per message, its Message-ID and
 * the campaign's token found in it (`token` matches it in the raw text).
 */
export async function startRelaySink(port, token) {
  const received = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 1000,
    onData(stream, session, callback) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        const head = raw.slice(0, raw.search(/\r?\n\r?\n/) >>> 0);
        const messageId = /^message-id:\s*(<[^>\r\n]+>)/im.exec(head)?.[1];
        received.push({ messageId, token: token.exec(raw)?.[0], at: Date.now() });
        callback();
      });
    },
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  // A client gone mid-session (mail-send killed) is that session's end, not the sink's.
  server.on('error', () => {});
  return { received, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * A customer's webhook receiver on `port`: answers 200 to a delivery whose signature verifies
 * with `secret` (set once the endpoint is made), 401 otherwise; counts deliveries per event id.
 */
export async function startReceiver(port) {
  const receiver = {
    secret: undefined,
    /** event id -> { type, deliveries, first } */
    events: new Map(),
    deliveries: 0,
    badSignatures: 0,
    onEvent: undefined,
  };
  const server = createServer((req, res) => {
    const chunks = [];
    // A sender killed mid-request (webhooks kill -9) aborts it: nothing to record.
    req.on('error', () => {});
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const ok = receiver.secret !== undefined && verifySignature(receiver.secret, req.headers['x-service-timestamp'], req.headers['x-service-signature'], raw, Date.now());
      if (!ok) {
        receiver.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const body = JSON.parse(raw.toString('utf8'));
      receiver.deliveries++;
      const seen = receiver.events.get(body.id);
      if (seen) seen.deliveries++;
      else {
        receiver.events.set(body.id, { type: body.type, deliveries: 1, first: Date.now() });
        receiver.onEvent?.(body);
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hook`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  });
}

/** Waits until `port` accepts connections again (an instance restarted behind it). */
export function listening(port, timeoutMs = 60_000) {
  return waitFor(() => portAnswers(port), { timeoutMs, intervalMs: 50, what: `a listener on ${port}` });
}
