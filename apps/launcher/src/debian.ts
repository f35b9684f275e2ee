/**
 * A server binary from Debian's packages without root: `apt-get download` fetches the .deb
 * files (with the library packages the machine lacks), and `dpkg-deb -x` unpacks them under
 * <data>/debian, a private /usr tree. Nothing is installed on the machine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export class MissingTool extends Error {}

/** A program on the PATH, or in one of `extra`. */
export function onPath(name: string, extra: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...extra].filter(Boolean);
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

function run(argv: string[], cwd?: string): string {
  const [cmd, ...args] = argv;
  const out = spawnSync(cmd!, args, { cwd, encoding: 'utf8' });
  if (out.error || out.status !== 0) throw new Error(`${argv.join(' ')} failed: ${(out.stderr || out.error?.message || '').trim().split('\n').slice(-2).join(' ')}`);
  return out.stdout;
}

function installed(pkg: string): boolean {
  const out = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return out.status === 0 && out.stdout.includes('install ok installed');
}

/**
 * The library packages `pkg` needs, directly or through another such library, that the
 * machine does not have; of alternatives, the first. What else a package depends on
 * (programs, fonts, scripts for its web interface) is not needed to run the daemon.
 */
export function missingLibraries(pkg: string, dependsOutput: string, isInstalled: (pkg: string) => boolean): string[] {
  // `apt-cache depends --recurse` prints each package flush left, then its dependencies
  // indented; " |Depends:" marks the first of alternatives, the next line being its fallback.
  const graph = new Map<string, string[]>();
  let current: string[] = [];
  let fallback = false;
  for (const line of dependsOutput.split('\n')) {
    const dep = /^\s+(\|?)(?:Pre)?Depends: (\S+)$/.exec(line);
    if (dep) {
      if (!fallback) current.push(dep[2]!);
      fallback = dep[1] === '|';
    } else if (/^\S+$/.test(line)) {
      graph.set(line, (current = []));
      fallback = false;
    }
  }
  const needed = new Set<string>();
  const queue = [pkg];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    for (const dep of graph.get(name) ?? []) {
      if (needed.has(dep) || !/^lib/.test(dep) || dep.startsWith('libjs-') || dep.endsWith('-perl') || isInstalled(dep)) continue;
      needed.add(dep);
      queue.push(dep);
    }
  }
  return [...needed].sort();
}

/** Unpacks `pkg` and the libraries it lacks under `root`; returns the packages fetched. */
export function fetchDebianPackage(pkg: string, root: string): string[] {
  if (!existsSync('/usr/bin/apt-get') || !existsSync('/usr/bin/dpkg-deb')) throw new MissingTool(`${pkg} is not installed and this machine has no apt-get to fetch it`);
  const depends = run(['apt-cache', 'depends', '--recurse', '--no-recommends', '--no-suggests', '--no-conflicts', '--no-breaks', '--no-replaces', '--no-enhances', pkg]);
  const packages = [pkg, ...missingLibraries(pkg, depends, installed)];
  mkdirSync(root, { recursive: true });
  const downloads = mkdtempSync(join(root, '.download-'));
  try {
    run(['apt-get', 'download', '-q', ...packages], downloads);
    for (const deb of readdirSync(downloads).filter((f) => f.endsWith('.deb'))) run(['dpkg-deb', '-x', join(downloads, deb), root]);
  } finally {
    rmSync(downloads, { recursive: true, force: true });
  }
  return packages;
}

/** The directories of shared libraries inside an unpacked tree (for LD_LIBRARY_PATH). */
export function libraryDirs(root: string, subdirs: string[] = []): string[] {
  const lib = join(root, 'usr', 'lib');
  if (!existsSync(lib)) return [];
  const multiarch = readdirSync(lib).filter((d) => /-linux-gnu/.test(d));
  return [...subdirs, ...multiarch].map((d) => join(lib, d)).filter((d) => existsSync(d));
}
