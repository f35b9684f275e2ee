// CPU seconds used by processes (user + system, from /proc), for the benchmarks' breakdowns:
// on a small machine everything shares the cores, so CPU per request decides throughput.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** Fields of /proc/<pid>/stat after the command name (utime is [11], stime [12], cutime [13], cstime [14]). */
function statFields(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
}

export function cpuOf(pid) {
  try {
    const fields = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds of this process's children that have exited and been waited for (smtp-source). */
export function childrenCpu() {
  const fields = statFields('self');
  return (Number(fields[13]) + Number(fields[14])) / TICKS;
}

/** Pids of every process with exactly this name (nats-server, postgres). */
export function pidsOf(name) {
  try {
    return execFileSync('pgrep', ['-x', name]).toString().trim().split('\n').map(Number);
  } catch {
    return [];
  }
}

/** The pid of the process listening on this TCP port on the machine (`ss`), or undefined. */
function listenerOf(port) {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`]).toString();
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * This run's nats-server, the one listening on NATS_URL's port: other nats-servers on the
 * machine (other agents', a test run's) are not counted. Every nats-server if it is not found.
 */
export function natsPidsOf(natsUrl) {
  const pid = listenerOf(new URL(natsUrl).port || '4222');
  return pid ? [pid] : pidsOf('nats-server');
}

/**
 * This run's PostgreSQL: the server listening on DATABASE_URL's port, its background
 * processes (checkpointer, WAL writer, autovacuum), and the sessions of the run's database;
 * not the sessions of other databases (other agents' tests on the same server). Every
 * postgres process if the server is not found.
 */
export function postgresPidsOf(databaseUrl) {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  const server = listenerOf(url.port || '5432');
  if (!server) return pidsOf('postgres');
  let children = [];
  try {
    children = execFileSync('pgrep', ['-P', String(server)]).toString().trim().split('\n').map(Number);
  } catch {
    // none
  }
  const own = children.filter((pid) => {
    try {
      // A session is "postgres: [cluster: ]<user> <database> <host>(<port>) <state>"; background processes name their job.
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const session = /(?:^|: )(\S+) (\S+) (?:[\d.:a-f]+\(\d+\)|\[local\])/.exec(title);
      return !session || session[2] === database;
    } catch {
      return false;
    }
  });
  return [server, ...own];
}

/** CPU seconds so far of each labelled group of processes, and of this process as `benchLabel`. */
export function cpuSnapshot(named, benchLabel = 'bench') {
  const snap = {};
  for (const [label, pids] of Object.entries(named)) snap[label] = pids().reduce((t, pid) => t + cpuOf(pid), 0);
  snap[benchLabel] = (process.cpuUsage().user + process.cpuUsage().system) / 1e6;
  return snap;
}

/** `label ms, ...`: CPU milliseconds per unit of work of each label between two snapshots. */
export function cpuPerUnit(before, after, units, digits = 2) {
  return Object.keys(after)
    .map((k) => `${k} ${(((after[k] - before[k]) * 1000) / units).toFixed(digits)}`)
    .join(', ');
}
