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
