// npm run bench:login-timing — does the time of a login answer (or of a reset request, or a
// code) tell whether an account has the email? Wrong passwords for emails with an account and for emails without one, in pairs
// (which goes first drawn at random), one request at a time, through gateway -> NATS -> auth
// (the brute-force guard's row, the account look-up, argon2id) with each service in its own
// process; then the same once the emails are locked (429, no password checked); then asking
// for a password reset (202), and verify-email with a wrong code (400). Printed per
// case: the answers seen, median, mean, p10 and p90, the difference of the medians, and how
// much two random halves of the same case differ (the noise floor of this run).
// Options: --accounts N (40), --rounds N (8: each email gets that many wrong passwords, fewer
// than the 10 that lock), --locked N (4: answers per email once locked).
import { createTestContext } from '@mailroom/testing';
import { arg, percentile, startProcess } from './common.mjs';

const ACCOUNTS = arg('accounts', 40);
const ROUNDS = Math.min(arg('rounds', 8), 9);
const LOCKED = arg('locked', 4);
const PASSWORD = 'correct horse battery';
const children = [];

const ctx = await createTestContext({ LOG_LEVEL: 'info', MIGRATE_ON_START: 'true', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0' });
try {
  await startProcess('orgs', ctx.env, { children });
  await startProcess('auth', ctx.env, { children });
  const { endpoints } = await startProcess('gateway', ctx.env, { children, ready: (e) => e.http });
  const post = async (path, body) => {
    const res = await fetch(`${endpoints.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res.status;
  };
  /** One request, timed from its start to the last byte of the answer. */
  const timed = async (path, body) => {
    const started = performance.now();
    const res = await fetch(`${endpoints.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return { ms: performance.now() - started, status: res.status };
  };
  const login = (email) => timed('/api/v1/auth/login', { email, password: 'not the password' });
  const resetRequest = (email) => timed('/api/v1/auth/password/reset-request', { email });
  // The signup's verification code is live for the first 5 wrong codes (each counted on its row), dead after.
  const verifyCode = (email) => timed('/api/v1/auth/verify-email', { email, code: '000000' });

  const run = Date.now();
  const known = Array.from({ length: ACCOUNTS }, (_, i) => `known-${i}-${run}@example.com`);
  const unknown = Array.from({ length: ACCOUNTS }, (_, i) => `unknown-${i}-${run}@example.com`);
  for (const email of known) if ((await post('/api/v1/auth/signup', { email, password: PASSWORD })) !== 201) throw new Error(`signup of ${email} failed`);
  // Warm-up (connections, prepared statements, the dummy hash an unknown email is checked against), not counted.
  for (let i = 0; i < 5; i++) await Promise.all([login(`warm-known-${i}-${run}@example.com`), post('/api/v1/auth/login', { email: known[0], password: PASSWORD })]);

  /** Each email of both lists `rounds` times, known and unknown in pairs, in random order. */
  async function measure(rounds, request = login) {
    const times = { known: [], unknown: [] };
    const statuses = { known: new Set(), unknown: new Set() };
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < ACCOUNTS; i++) {
        const pair = Math.random() < 0.5 ? ['known', 'unknown'] : ['unknown', 'known'];
        for (const which of pair) {
          const t = await request(which === 'known' ? known[i] : unknown[i]);
          times[which].push(t.ms);
          statuses[which].add(t.status);
        }
      }
    }
    return { times, statuses };
  }

  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { n: s.length, median: percentile(s, 50), mean: s.reduce((a, b) => a + b, 0) / s.length, p10: percentile(s, 10), p90: percentile(s, 90) };
  };
  /** How far apart the medians of two random halves of one case are: the noise of this run. */
  const halves = (xs) => {
    const shuffled = [...xs].sort(() => Math.random() - 0.5);
    const mid = Math.floor(shuffled.length / 2);
    return Math.abs(stats(shuffled.slice(0, mid)).median - stats(shuffled.slice(mid)).median);
  };
  const fmt = (n) => n.toFixed(2).padStart(7);
  const report = (title, { times, statuses }) => {
    console.log(`\n${title}`);
    for (const which of ['known', 'unknown']) {
      const s = stats(times[which]);
      console.log(`  ${which.padEnd(8)} answers ${[...statuses[which]].join(',')}  n ${s.n}  median ${fmt(s.median)} ms  mean ${fmt(s.mean)} ms  p10 ${fmt(s.p10)}  p90 ${fmt(s.p90)}`);
    }
    const diff = stats(times.known).median - stats(times.unknown).median;
    console.log(`  known - unknown, medians: ${diff.toFixed(2)} ms;  noise (halves of one case): known ${halves(times.known).toFixed(2)} ms, unknown ${halves(times.unknown).toFixed(2)} ms`);
  };

  console.log(`bench:login-timing — ${ACCOUNTS} emails with an account and ${ACCOUNTS} without, one request at a time, gateway, auth and orgs in their own processes`);
  report(`wrong password, not locked (${ROUNDS} per email; 401 expected)`, await measure(ROUNDS));
  // Lock them all: the 10th failure locks.
  for (let r = ROUNDS; r < 10; r++) for (let i = 0; i < ACCOUNTS; i++) await Promise.all([login(known[i]), login(unknown[i])]);
  report(`locked (${LOCKED} per email; 429 expected)`, await measure(LOCKED));
  report(`password reset request (${ROUNDS} per email; 202 expected, answered before the look-up)`, await measure(ROUNDS, resetRequest));
  report(`verify-email with a wrong code (${ROUNDS} per email, the first 5 at a live code; 400 expected)`, await measure(ROUNDS, verifyCode));
} finally {
  for (const c of children.reverse()) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
  await ctx.cleanup();
}
