/**
 * NATS with JetStream: no npm package ships the server binary (they download it at install
 * time, from outside the npm registry), so the launcher uses `nats-server` from the PATH or
 * /usr/sbin, else Debian's package unpacked under <data>/debian without root.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fetchDebianPackage, MissingTool, onPath } from './debian';
import { portAnswers, waitUntil } from './net';
import { startProcess, type Started } from './processes';

const INSTALL = 'install nats-server (Debian: apt-get install nats-server; macOS: brew install nats-server), or set NATS_URL to a NATS server with JetStream';

function findServer(dataDir: string, say: (line: string) => void): string {
  const unpacked = join(dataDir, 'debian');
  const found = onPath('nats-server', ['/usr/sbin', '/usr/local/sbin', join(unpacked, 'usr', 'sbin'), join(unpacked, 'usr', 'bin')]);
  if (found) return found;
  say(`nats-server is not installed: fetching Debian's package into ${unpacked}`);
  try {
    fetchDebianPackage('nats-server', unpacked);
  } catch (err) {
    throw new MissingTool(`NATS server not found and not fetched (${err instanceof Error ? err.message : String(err)}): ${INSTALL}`);
  }
  const fetched = onPath('nats-server', [join(unpacked, 'usr', 'sbin'), join(unpacked, 'usr', 'bin')]);
  if (!fetched) throw new MissingTool(`NATS server not found in Debian's package: ${INSTALL}`);
  return fetched;
}

export async function startNats(opts: { dataDir: string; port: number; logFile: string; say: (line: string) => void }): Promise<Started> {
  const server = findServer(opts.dataDir, opts.say);
  const store = join(opts.dataDir, 'nats');
  mkdirSync(store, { recursive: true });
  const started = startProcess([server, '-a', '127.0.0.1', '-p', String(opts.port), '-js', '-sd', store], { logFile: opts.logFile });
  await waitUntil('NATS', () => portAnswers(opts.port), { timeoutMs: 20_000, exited: started.exited });
  return started;
}
