// node bench/tracing-cost.mjs [--rounds 2] [--only gateway|send] [-- <bench args>]
// The cost of tracing (issue 33): bench:gateway and bench:send with tracing off, on at 10%
// and on at 100% (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG),
// exported to an OTLP/HTTP sink on loopback in this process that reads each request and
// answers 200 (so export costs what it costs, and nothing waits on a collector). The three
// settings alternate within each round, so a machine whose load drifts spreads it over all
// of them; each run prints its own bare limit too. Prints each run's summary lines.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { root, arg } from './common.mjs';

const ROUNDS = arg('rounds', 2);
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const extra = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : [];
const BENCHES = {
  gateway: ['--duration', '10', ...extra],
  send: ['--messages', '1500', '--rates', '50', '--paced-seconds', '5', ...extra],
};

let exported = { requests: 0, bytes: 0 };
const sink = createServer((req, res) => {
  req.on('data', (c) => (exported.bytes += c.length));
  req.on('end', () => {
    exported.requests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((r) => sink.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${sink.address().port}`;

const SETTINGS = [
  { name: 'off', env: {} },
  { name: 'on, 10%', env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
  { name: 'on, 100%', env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' } },
];

function run(bench, setting) {
  const env = { ...process.env };
  for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG']) delete env[k];
  Object.assign(env, setting.env);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['scripts/mailroom', 'bench', bench, ...BENCHES[bench]], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`bench:${bench} (${setting.name}) exited with ${code}\n${out}`))));
  });
}

try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const bench of Object.keys(BENCHES).filter((b) => !only || b === only)) {
      for (const setting of SETTINGS) {
        exported = { requests: 0, bytes: 0 };
        const started = new Date().toISOString();
        const out = await run(bench, setting);
        const lines = out.split('\n').filter((l) => l.trim() && !l.startsWith('mailroom:'));
        console.log(`\n=== round ${round}, bench:${bench}, tracing ${setting.name} (${started}; exported ${exported.requests} requests, ${(exported.bytes / 1e6).toFixed(1)} MB)`);
        console.log(lines.join('\n'));
      }
    }
  }
} finally {
  sink.close();
}
