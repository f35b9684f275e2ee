// CPU seconds used by processes (user + system, from /proc), for the benchmarks' breakdowns:
// on a small machine everything shares the cores, so CPU per request decides throughput.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

export function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds of this process's children that have exited and been waited for (smtp-source). */
export function childrenCpu() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
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
