// npm run bench:gateway — authenticated GET /api/v1/org through gateway -> NATS -> orgs ->
// PostgreSQL, each service in its own process as in production, against the bare limit: the
// same query from a bare express handler on PostgreSQL. Both at 64 connections, in one run.
// Options: --duration <s> (default 15), --connections <n> (default 64), --all-in-one, --profile.
import { fork, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createTestContext } from '@mailroom/testing';
import { arg } from './common.mjs';
import { cpuSnapshot, natsPidsOf, postgresPidsOf } from './cpu.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const duration = arg('duration', 15);
// --all-in-one: the services in one process (npm start's shape) instead of one process each.
const allInOne = process.argv.includes('--all-in-one');
// --profile: CPU profiles of the services into /tmp/mailroom-prof, or BENCH_PROFILE_DIR (for finding where time goes).
const profile = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? '/tmp/mailroom-prof'}`] : [];
const connections = arg('connections', 64);

const children = [];
function startService(name, env) {
  const entry = name === 'all-in-one' ? 'apps/all-in-one/dist/main.js' : `services/${name}/dist/main.js`;
  return new Promise((resolve, reject) => {
    // Started as every start command starts a service: tracing preloaded (on when OTEL_EXPORTER_OTLP_ENDPOINT is set).
    const preload = ['--require', path.join(root, 'libs/platform/dist/telemetry-preload.js')];
    const child = spawn(process.execPath, [...profile, ...preload, path.join(root, entry)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      for (const line of buf.split('\n')) {
        if (line.includes('"msg":"started"') && (name !== 'all-in-one' || line.includes('"service":"gateway"'))) {
          const endpoints = JSON.parse(line).endpoints ?? {};
          resolve(endpoints);
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

async function measured(named, fn) {
  const before = cpuSnapshot(named, 'bench (autocannon)');
  const result = await fn();
  const after = cpuSnapshot(named, 'bench (autocannon)');
  const total = result.requests.total;
  result.cpuMsPerRequest = Object.fromEntries(Object.keys(after).map((k) => [k, ((after[k] - before[k]) * 1000) / total]));
  return result;
}

function run(url, token) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, headers: { authorization: `Bearer ${token}` } }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function warm(url, token) {
  await new Promise((resolve, reject) => autocannon({ url, connections, duration: 3, headers: { authorization: `Bearer ${token}` } }, (e, r) => (e ? reject(e) : resolve(r))));
}

const ctx = await createTestContext({
  LOG_LEVEL: 'info', // the bench reads each service's "started" line; request logs are debug
  MIGRATE_ON_START: 'true',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
});
try {
  let http;
  if (allInOne) {
    ({ http } = await startService('all-in-one', ctx.env));
  } else {
    await startService('orgs', ctx.env);
    await startService('auth', ctx.env);
    ({ http } = await startService('gateway', ctx.env));
  }
  const post = (p, body, token) =>
    fetch(`${http}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) }).then((r) => r.json());
  const account = await post('/api/v1/auth/signup', { email: 'bench@example.com', password: 'correct horse battery' });
  const key = await post('/api/v1/keys', { name: 'bench' }, account.access_token);
  const check = await fetch(`${http}/api/v1/org`, { headers: { authorization: `Bearer ${key.key}` } });
  if (check.status !== 200) throw new Error(`GET /api/v1/org answered ${check.status}`);

  const bare = fork(path.join(root, 'bench/bare-org-server.mjs'), { env: { ...process.env, DATABASE_URL: ctx.env.DATABASE_URL, ORG_ID: account.organization.id } });
  children.push(bare);
  const barePort = await new Promise((resolve) => bare.once('message', (m) => resolve(m.port)));
  const bareUrl = `http://127.0.0.1:${barePort}/api/v1/org`;

  const [orgsProc, authProc, gatewayProc] = allInOne ? [children[0], { pid: -1 }, { pid: -1 }] : children;
  const common = { 'nats-server': () => natsPidsOf(ctx.env.NATS_URL), postgres: () => postgresPidsOf(ctx.env.DATABASE_URL) };
  await warm(bareUrl, key.key);
  const bareResult = await measured({ bare: () => [bare.pid], ...common }, () => run(bareUrl, key.key));
  await warm(`${http}/api/v1/org`, key.key);
  const full = await measured(
    allInOne ? { 'all-in-one': () => [orgsProc.pid], ...common } : { gateway: () => [gatewayProc.pid], orgs: () => [orgsProc.pid], auth: () => [authProc.pid], ...common },
    () => run(`${http}/api/v1/org`, key.key),
  );

  const row = (name, r) =>
    `${name.padEnd(44)} ${String(Math.round(r.requests.average)).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}   errors ${r.errors}`;
  console.log(`\nbench:gateway — ${allInOne ? 'services in one process' : 'one process per service'}, ${connections} connections, ${duration} s each, GET /api/v1/org with an API key\n`);
  console.log(row('full path (gateway -> NATS -> orgs -> pg)', full));
  console.log(row('bare limit (express -> pg, same query)', bareResult));
  const ratio = full.requests.average / bareResult.requests.average;
  console.log(`\nfull / bare throughput: ${(ratio * 100).toFixed(1)}%   (target >= 50%, p99 <= 20 ms)`);
  const cpu = (r) => Object.entries(r.cpuMsPerRequest).filter(([, ms]) => ms > 0.001).map(([k, ms]) => `${k} ${ms.toFixed(3)}`).join(', ');
  console.log(`\nCPU ms per request (this machine has ${(await import('node:os')).availableParallelism()} cores, shared by everything above):`);
  console.log(`  full: ${cpu(full)}`);
  console.log(`  bare: ${cpu(bareResult)}`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
  await ctx.cleanup();
}
