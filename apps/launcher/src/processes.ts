/**
 * Processes the launcher starts and must find again: each runs in its own process group
 * (a terminal's Ctrl-C reaches the launcher only, which then stops them in order), and each
 * has a record under <data>/run/ naming it and the launcher that owns it. A record whose
 * launcher is gone (kill -9) marks an orphan, which the next launcher stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const processRecord = z.object({
  name: z.string(),
  pid: z.number().int().positive(),
  /** The process's start time (Linux /proc): a pid reused by another process does not match. */
  started: z.string().nullable(),
  owner: z.object({ pid: z.number().int().positive(), started: z.string().nullable() }),
  /** The signal that stops it cleanly (PostgreSQL: SIGINT, a fast shutdown). */
  stopSignal: z.enum(['SIGINT', 'SIGTERM']),
});
export type ProcessRecord = z.infer<typeof processRecord>;

/** Field 22 of /proc/<pid>/stat, the start time in clock ticks; null where there is no /proc. */
export function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process lives and is still the one recorded (not a reused pid). */
export function isRunning(pid: number, started: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but is not ours to signal.
    if (!(err instanceof Error && 'code' in err && err.code === 'EPERM')) return false;
  }
  const now = startTime(pid);
  return started === null || now === null || now === started;
}

export class Records {
  constructor(readonly dir: string) {}

  write(child: ChildProcess & { pid: number }, name: string, stopSignal: ProcessRecord['stopSignal']): ProcessRecord {
    mkdirSync(this.dir, { recursive: true });
    const record: ProcessRecord = { name, pid: child.pid, started: startTime(child.pid), owner: { pid: process.pid, started: startTime(process.pid) }, stopSignal };
    writeFileSync(join(this.dir, `${name}.json`), JSON.stringify(record));
    return record;
  }

  remove(name: string): void {
    rmSync(join(this.dir, `${name}.json`), { force: true });
  }

  all(): ProcessRecord[] {
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
    return files.flatMap((f) => {
      try {
        return [processRecord.parse(JSON.parse(readFileSync(join(this.dir, f), 'utf8')))];
      } catch {
        rmSync(join(this.dir, f), { force: true });
        return [];
      }
    });
  }
}

export interface Started {
  child: ChildProcess & { pid: number };
  /** Resolves with the exit code (or 128 + signal number) when the process ends. */
  exited: Promise<number>;
}

/** A process in its own group; its output appended to `logFile`, or inherited/piped as given. */
export function startProcess(argv: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; logFile?: string; stdout?: 'inherit' | 'pipe'; uid?: number; gid?: number }): Started {
  const [command, ...args] = argv;
  if (!command) throw new Error('no command');
  const fd = opts.logFile ? openSync(opts.logFile, 'a') : undefined;
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true,
    stdio: fd === undefined ? ['ignore', opts.stdout ?? 'inherit', 'inherit'] : ['ignore', fd, fd],
    ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.gid }),
  });
  if (fd !== undefined) closeSync(fd);
  const exited = new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  return { child: Object.assign(child, { pid: child.pid }), exited };
}

/** Signals the process's group (it and its children), ignoring one already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

const until = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stops a process: `signal`, then SIGKILL after `graceMs`. `exited` is the launcher's own
 * child's exit (a child is a zombie, alive to kill(0), until reaped); for an orphan the
 * record's pid is polled.
 */
export async function stopProcess(target: { pid: number; started: string | null; exited?: Promise<number> }, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  const gone = target.exited ?? pollGone(target.pid, target.started);
  signalGroup(target.pid, signal);
  const done = await Promise.race([gone.then(() => true), until(graceMs).then(() => false)]);
  if (done) return;
  signalGroup(target.pid, 'SIGKILL');
  await Promise.race([gone, until(5_000)]);
}

async function pollGone(pid: number, started: string | null): Promise<number> {
  while (isRunning(pid, started)) await until(50);
  return 0;
}
