// What the benchmarks share: options, percentiles, Postfix's tools, and starting the platform's
// processes the way they run in production (reading each one's "started" log line).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A numeric option `--name <n>`, or `dflt`. */
export function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** The value at percentile `p` of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The path of one of Postfix's test tools (smtp-source, smtp-sink), or exit saying how to get it. */
export function postfixTool(tool, bench) {
  const found = [`/usr/sbin/${tool}`, `/usr/bin/${tool}`].find(existsSync);
  if (found) return found;
  console.error(`${bench} needs ${tool}: apt-get install postfix (it ships /usr/sbin/${tool})`);
  process.exit(2);
}

/**
 * Starts `all-in-one` (every service, as `npm start`) or one service as its own process, and
 * resolves with the child and the endpoints it logged once `ready(endpoints)` holds (the
 * all-in-one process logs one "started" line per service). The child goes into `children`.
 */
export function startProcess(name, env, { children, nodeArgs = [], ready = () => true }) {
  const entry = name === 'all-in-one' ? ['apps/all-in-one/dist/main.js', 'start'] : [`services/${name}/dist/main.js`];
  return new Promise((resolve, reject) => {
    // As every start command starts it: tracing preloaded (on when OTEL_EXPORTER_OTLP_ENDPOINT is set).
    const preload = ['--require', path.join(root, 'libs/platform/dist/telemetry-preload.js')];
    const child = spawn(process.execPath, [...nodeArgs, ...preload, path.join(root, entry[0]), ...entry.slice(1)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const endpoints = {};
    let buf = '';
    child.stdout.on('data', (d) => {
      if (process.env.BENCH_LOG_LEVEL) process.stderr.write(d);
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const line of lines) {
        if (!line.includes('"msg":"started"')) continue;
        Object.assign(endpoints, JSON.parse(line).endpoints ?? {});
        if (ready(endpoints)) resolve({ child, endpoints });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}
