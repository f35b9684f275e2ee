/**
 * `node apps/launcher/dist/main.js start|test [jest args]|stop`: what `npm start` and
 * `npm test` run (scripts/mailroom). It brings up the servers the platform or the tests need
 * (see servers.ts), runs the platform or jest in a process group of its own, and on Ctrl-C or
 * SIGTERM stops that first, then the servers it started. `stop` stops what a killed launcher
 * left running.
 */
import { join, resolve } from 'node:path';
import { banner, waitForApi } from './banner';
import { prettyLogs } from './pretty';
import { Records, startProcess, stopProcess, type Started } from './processes';
import { ensureServers, stopOrphans, type Servers } from './servers';
import { readSettings, type Mode } from './settings';

const ROOT = resolve(__dirname, '..', '..', '..');
const say = (line: string) => void process.stderr.write(`mailroom: ${line}\n`);
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function main(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'stop') {
    await stopOrphans(new Records(join(readSettings('start', ROOT, env).dataDir, 'run')), say);
    return 0;
  }
  if (command !== 'start' && command !== 'test' && command !== 'bench') {
    say('usage: launcher start | test [jest arguments] | bench <name> [arguments] | stop');
    return 2;
  }
  // A benchmark makes test contexts, on the servers the tests use.
  const mode: Mode = command === 'start' ? 'start' : 'test';
  const settings = readSettings(mode, ROOT, env);
  // A Ctrl-C while servers start (initdb, rspamd's first compile) waits for them, then stops
  // them: killed at once, the launcher would leave them to the next start.
  let early: NodeJS.Signals | undefined;
  const onEarlySignal = (signal: NodeJS.Signals) => {
    if (!early) say(`stopping (${signal}) once the servers being started are up`);
    early = signal;
  };
  for (const signal of SIGNALS) process.on(signal, onEarlySignal);
  const servers = await ensureServers(settings, say);
  for (const signal of SIGNALS) process.off(signal, onEarlySignal);
  if (early) {
    await servers.stop();
    return 0;
  }
  for (const line of servers.summary) say(line);
  const records = new Records(join(settings.dataDir, 'run'));
  const name = command === 'start' ? 'platform' : 'tests';
  const pretty = command === 'start' && process.stdout.isTTY === true && env.LOG_FORMAT !== 'json';
  let child: Started;
  try {
    child = startProcess(command === 'bench' ? benchCommand(rest) : childCommand(mode, rest), { cwd: ROOT, env: { ...env, ...servers.env }, stdout: pretty ? 'pipe' : 'inherit' });
  } catch (err) {
    await servers.stop();
    throw err;
  }
  const record = records.write(child.child, name, 'SIGTERM');
  if (pretty && child.child.stdout) child.child.stdout.pipe(prettyLogs());
  if (command === 'start') void announce(settings.dataDir, servers, env, child);
  return supervise(child, { ...record, name }, records, servers, mode);
}

function benchCommand([name, ...args]: string[]): string[] {
  return [process.execPath, join(ROOT, 'bench', `${name}.mjs`), ...args];
}

function childCommand(mode: Mode, args: string[]): string[] {
  if (mode === 'start') return [process.execPath, '--require', './libs/platform/dist/telemetry-preload.js', 'apps/all-in-one/dist/main.js', 'start'];
  return [process.execPath, join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...args];
}

async function announce(dataDir: string, servers: Servers, env: NodeJS.ProcessEnv, child: Started): Promise<void> {
  const port = Number(env.HTTP_PORT ?? 8080);
  if (!(await waitForApi(port, child.exited))) return;
  const startedAt = Number(env.MAILROOM_STARTED_AT_MS);
  const seconds = Number.isFinite(startedAt) && startedAt > 0 ? (Date.now() - startedAt) / 1000 : undefined;
  process.stderr.write(banner({ port, smtpPort: Number(env.SMTP_PORT ?? 2525), mailDomain: env.MAIL_DOMAIN ?? 'mailroom.localhost', dataDir, servers: servers.summary, seconds }));
}

/**
 * Waits for the child; on a signal, passes it on (the platform stops on SIGTERM, jest on
 * SIGINT as from a terminal), waits for it to end, then stops the servers.
 */
function supervise(child: Started, record: { pid: number; started: string | null; name: string }, records: Records, servers: Servers, mode: Mode): Promise<number> {
  return new Promise((done) => {
    let stopping = false;
    const finish = async (code: number) => {
      records.remove(record.name);
      await servers.stop().catch((err: unknown) => say(`could not stop every server: ${String(err)}`));
      done(code);
    };
    const onSignal = (signal: NodeJS.Signals, why: string = signal) => {
      if (stopping) return;
      stopping = true;
      say(`stopping (${why}): the ${mode === 'start' ? 'platform' : 'tests'} first, then the servers started here`);
      const forward = mode === 'test' && signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
      void stopProcess({ ...record, exited: child.exited }, forward, 30_000)
        .then(() => child.exited)
        .then(finish);
    };
    for (const signal of SIGNALS) process.on(signal, onSignal);
    // npm killed with SIGKILL passes nothing on: the launcher, re-parented, stops by itself.
    const parent = process.ppid;
    setInterval(() => process.ppid !== parent && onSignal('SIGTERM', 'the command that started it is gone'), 500).unref();
    void child.exited.then((code) => {
      if (stopping) return;
      stopping = true;
      void finish(code);
    });
  });
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (err: unknown) => {
    say(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
