/**
 * The servers the platform or the tests need: the user's own (by URL), the ones already
 * answering on the local ports, or ones the launcher starts and later stops. Orphans of a
 * launcher that was killed are stopped first, the platform before its servers.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { portAnswers } from './net';
import { findNatsServer, startNats } from './nats';
import { startPostgres } from './postgres';
import { isRunning, Records, stopProcess, type ProcessRecord, type Started } from './processes';
import { startRspamd } from './rspamd';
import { serverEnv, SettingsError, type ServerName, type Settings } from './settings';
import { unprivileged } from './unprivileged';

export type Say = (line: string) => void;

/** Stopped in this order: what uses the servers first, the database last. */
const STOP_ORDER = ['platform', 'tests', 'rspamd', 'nats', 'postgres'];
const LABEL: Record<ServerName, string> = { postgres: 'PostgreSQL', nats: 'NATS (JetStream)', rspamd: 'rspamd' };

export interface Servers {
  /** The variables that point the platform or the tests at them. */
  env: Record<string, string>;
  /** One line per server: where it is and whose it is. */
  summary: string[];
  /** Stops the ones this launcher started, the database last. */
  stop(): Promise<void>;
}

function byStopOrder<T extends { name: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => STOP_ORDER.indexOf(a.name) - STOP_ORDER.indexOf(b.name));
}

/** Stops what a launcher that is gone left running. */
export async function stopOrphans(records: Records, say: Say): Promise<void> {
  for (const record of byStopOrder(records.all())) {
    if (isRunning(record.owner.pid, record.owner.started) && record.owner.pid !== process.pid) continue;
    if (isRunning(record.pid, record.started)) {
      say(`stopping ${record.name} (pid ${record.pid}) left running by an earlier start that was killed`);
      await stopProcess(record, record.stopSignal, 20_000);
    }
    records.remove(record.name);
  }
}

export async function ensureServers(settings: Settings, say: Say): Promise<Servers> {
  const records = new Records(join(settings.dataDir, 'run'));
  await stopOrphans(records, say);
  const logs = join(settings.dataDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const how = unprivileged();
  const owned: { name: ServerName; record: ProcessRecord; started: Started }[] = [];
  const summary: string[] = [];
  const stop = async () => {
    for (const { name, record, started } of byStopOrder(owned)) {
      await stopProcess({ ...record, exited: started.exited }, record.stopSignal, 20_000);
      records.remove(name);
    }
    owned.length = 0;
  };
  const starters: Record<ServerName, (port: number) => Promise<Started>> = {
    postgres: (port) => startPostgres({ dataDir: settings.dataDir, port, logFile: join(logs, 'postgres.log'), how, say }),
    nats: (port) => startNats({ dataDir: settings.dataDir, port, logFile: join(logs, 'nats.log'), say }),
    rspamd: (port) => startRspamd({ dataDir: settings.dataDir, port, logFile: join(logs, 'rspamd.log'), how, say }),
  };
  const resolved = { ...settings.servers };
  try {
    for (const name of ['postgres', 'nats', 'rspamd'] as const) {
      const provision = settings.servers[name];
      if (provision.kind === 'configured') {
        summary.push(`${LABEL[name]}: ${shown(provision.url)} (yours)`);
        continue;
      }
      if (provision.kind === 'off') {
        summary.push(`${LABEL[name]}: off (messages are stored with the spam verdict "unscanned"; MAILROOM_RSPAMD=on starts one)`);
        continue;
      }
      const where = `127.0.0.1:${provision.port}`;
      if (await portAnswers(provision.port)) {
        // Another launcher's NATS (npm start beside npm test) has our operator; any other does not.
        if (name === 'nats' && !records.all().some((r) => r.name === 'nats' && isRunning(r.pid, r.started))) {
          throw new SettingsError(
            `${where} answers, but not with the NATS this launcher starts (whose operator and credentials are in ${join(settings.dataDir, 'nats', 'auth')}): set MAILROOM_NATS_PORT to a free port, or NATS_URL${settings.mode === 'test' ? ' and TEST_NATS_AUTH_DIR' : ' and NATS_CREDENTIALS_DIR'} to use that server`,
          );
        }
        summary.push(`${LABEL[name]}: ${where} (already running)`);
        continue;
      }
      if (provision.optional) {
        resolved[name] = { kind: 'off' };
        summary.push(`${LABEL[name]}: off (none answers on ${where}; messages are stored with the spam verdict "unscanned"; MAILROOM_RSPAMD=on starts one)`);
        continue;
      }
      say(`starting ${LABEL[name]} on ${where}`);
      const started = await starters[name](provision.port);
      owned.push({ name, record: records.write(started.child, name, name === 'postgres' ? 'SIGINT' : 'SIGTERM'), started });
      summary.push(`${LABEL[name]}: ${where} (started here, data in ${join(settings.dataDir, name)}, log in ${join(logs, `${name}.log`)})`);
    }
    const env = serverEnv({ ...settings, servers: resolved });
    // Tests that start a NATS server of their own (TLS, an outage) use the same binary.
    if (settings.mode === 'test') env.MAILROOM_NATS_SERVER = findNatsServer(settings.dataDir, say);
    return { env, summary, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function shown(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
