/**
 * rspamd for spam verdicts: the machine's binary (Debian's package) or the package unpacked
 * under <data>/debian without root, run unprivileged with a configuration of our own: one
 * scanning worker on 127.0.0.1:<port>, no controller or proxy, data and logs under
 * <data>/rspamd. Its first start compiles its rules (about 15 s); later ones reuse them.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fetchDebianPackage, libraryDirs, MissingTool, onPath } from './debian';
import { waitUntil } from './net';
import { startProcess, type Started } from './processes';
import { command, handOver, type Unprivileged } from './unprivileged';

const INSTALL = 'install rspamd (Debian: apt-get install rspamd), or set RSPAMD_URL to a running rspamd';

interface Install {
  bin: string;
  /** Where its stock configuration is (common.conf, options.inc...). */
  confDir: string;
  shareDir: string;
  libraryPath: string[];
}

/** Where an installation under `prefix` (/usr, or <unpacked>/usr) keeps its files. */
export function layout(bin: string): Omit<Install, 'libraryPath'> {
  const prefix = dirname(dirname(bin));
  const etc = prefix === '/usr' ? '/etc' : basename(prefix) === 'usr' ? join(dirname(prefix), 'etc') : join(prefix, 'etc');
  return { bin, confDir: join(etc, 'rspamd'), shareDir: join(prefix, 'share', 'rspamd') };
}

function findInstall(dataDir: string, say: (line: string) => void): Install {
  const system = onPath('rspamd', ['/usr/bin']);
  if (system && existsSync(layout(system).confDir)) return { ...layout(system), libraryPath: [] };
  const unpacked = join(dataDir, 'debian');
  const local = join(unpacked, 'usr', 'bin', 'rspamd');
  if (!existsSync(local)) {
    say(`rspamd is not installed: fetching Debian's package and the libraries it needs into ${unpacked}`);
    try {
      fetchDebianPackage('rspamd', unpacked);
    } catch (err) {
      throw new MissingTool(`rspamd not found and not fetched (${err instanceof Error ? err.message : String(err)}): ${INSTALL}`);
    }
    if (!existsSync(local)) throw new MissingTool(`rspamd not found in Debian's package: ${INSTALL}`);
  }
  return { ...layout(local), libraryPath: libraryDirs(unpacked, ['rspamd']) };
}

/** The whole configuration: the package's rules and modules, our one worker and our paths. */
export function configuration(port: number): string {
  return [
    '# Written by the launcher at each start (apps/launcher/src/rspamd.ts).',
    '.include "$CONFDIR/common.conf"',
    'options {',
    '  pidfile = "$RUNDIR/rspamd.pid";',
    '  .include "$CONFDIR/options.inc"',
    '}',
    'logging {',
    '  type = "file";',
    '  filename = "$LOGDIR/rspamd.log";',
    '  level = "warning";',
    '}',
    'worker "normal" {',
    `  bind_socket = "127.0.0.1:${port}";`,
    '  count = 1;',
    '  task_timeout = 8s;',
    '}',
    '',
  ].join('\n');
}

export async function startRspamd(opts: { dataDir: string; port: number; logFile: string; how: Unprivileged; say: (line: string) => void }): Promise<Started> {
  const install = findInstall(opts.dataDir, opts.say);
  const home = join(opts.dataDir, 'rspamd');
  const dirs = { db: join(home, 'db'), run: join(home, 'run'), log: join(home, 'log'), local: join(home, 'local') };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  const firstRun = !existsSync(join(home, 'rspamd.conf'));
  writeFileSync(join(home, 'rspamd.conf'), configuration(opts.port));
  handOver(opts.how, home);
  const vars = {
    CONFDIR: install.confDir,
    // Our own, empty: a machine's local.d and override.d do not reach the tests.
    LOCAL_CONFDIR: dirs.local,
    SHAREDIR: install.shareDir,
    RULESDIR: join(install.shareDir, 'rules'),
    LUALIBDIR: join(install.shareDir, 'lualib'),
    PLUGINSDIR: join(install.shareDir, 'plugins'),
    WWWDIR: join(install.shareDir, 'www'),
    DBDIR: dirs.db,
    RUNDIR: dirs.run,
    LOGDIR: dirs.log,
  };
  const argv = [install.bin, '-f', '-c', join(home, 'rspamd.conf'), ...Object.entries(vars).map(([k, v]) => `--var=${k}=${v}`)];
  const run = command(opts.how, argv);
  const env = install.libraryPath.length ? { ...process.env, LD_LIBRARY_PATH: [...install.libraryPath, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : process.env;
  if (firstRun) opts.say('starting rspamd: its first start compiles its rules (about 15 s)');
  const started = startProcess(run.argv, { env, logFile: opts.logFile, uid: run.uid, gid: run.gid });
  await waitUntil('rspamd', () => pong(opts.port), { timeoutMs: 180_000, exited: started.exited });
  return started;
}

async function pong(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/ping`, { signal: AbortSignal.timeout(1_000) });
  return res.ok && (await res.text()).trim() === 'pong';
}
