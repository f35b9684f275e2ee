/**
 * NATS with JetStream: no npm package ships the server binary (they download it at install
 * time, from outside the npm registry), so the launcher uses `nats-server` from the PATH or
 * /usr/sbin, else Debian's package unpacked under <data>/debian without root.
 *
 * The server trusts an operator whose keys and credentials the launcher writes once under
 * <data>/nats/auth (as `bus-credentials` does for a deployment): anonymous clients are
 * refused, each service connects as itself, and the tests mint users for their namespaces
 * with the account key kept there.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BUS_IDENTITIES } from '@mailroom/contracts';
import { readBusIdentity, refreshStaleIdentities, writeBusCredentials } from '@mailroom/messaging';
import { fetchDebianPackage, MissingTool, onPath } from './debian';
import { portAnswers, waitUntil } from './net';
import { startProcess, type Started } from './processes';

const INSTALL = 'install nats-server (Debian: apt-get install nats-server; macOS: brew install nats-server), or set NATS_URL to a NATS server with JetStream';

export function findNatsServer(dataDir: string, say: (line: string) => void): string {
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

/** Where the launcher's bus credentials live: NATS_CREDENTIALS_DIR of `npm start`, TEST_NATS_AUTH_DIR of `npm test`. */
export function natsAuthDir(dataDir: string): string {
  return join(dataDir, 'nats', 'auth');
}

/**
 * The operator, its include file and every identity's credentials, made on first start and
 * kept; made again (they are this machine's, for development) when a file is missing, as
 * after an upgrade that added one. Creds whose permissions an upgrade changed are minted
 * again with the kept account key, so the streams under that account stay.
 */
export async function ensureNatsAuth(dataDir: string, say: (line: string) => void): Promise<string> {
  const dir = natsAuthDir(dataDir);
  const complete = await Promise.all(BUS_IDENTITIES.map((identity) => readBusIdentity(dir, identity).then(() => existsSync(join(dir, 'nats-auth.conf')), () => false)));
  if (!complete.every(Boolean)) {
    await writeBusCredentials(dir, { force: true });
    say(`bus credentials written to ${dir}`);
    return dir;
  }
  const refreshed = await refreshStaleIdentities(dir);
  if (refreshed.length > 0) say(`bus credentials brought up to the permission table: ${refreshed.join(', ')}`);
  return dir;
}

export async function startNats(opts: { dataDir: string; port: number; logFile: string; say: (line: string) => void }): Promise<Started> {
  const server = findNatsServer(opts.dataDir, opts.say);
  const store = join(opts.dataDir, 'nats');
  mkdirSync(store, { recursive: true });
  const auth = await ensureNatsAuth(opts.dataDir, opts.say);
  const config = join(store, 'server.conf');
  writeFileSync(
    config,
    [
      '# Written by the launcher at each start.',
      `listen: 127.0.0.1:${opts.port}`,
      `jetstream { store_dir: ${JSON.stringify(store)} }`,
      // A client has 10 s, not 2, from connecting to its signed CONNECT: a test worker on a busy
      // machine can be that late, and the run then fails with "Authentication Timeout".
      'authorization { timeout: 10 }',
      // Resolved against this file's directory.
      `include ${JSON.stringify(relative(store, join(auth, 'nats-auth.conf')))}`,
      '',
    ].join('\n'),
  );
  const started = startProcess([server, '-c', config], { logFile: opts.logFile });
  await waitUntil('NATS', () => portAnswers(opts.port), { timeoutMs: 20_000, exited: started.exited });
  return started;
}
