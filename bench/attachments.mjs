// npm run bench:attachments — attachments of real size (issue 31): --messages (10) uploads of
// --mb (20) MB each through POST /api/v1/attachments, all at once, each then sent by reference
// to a real SMTP relay (libs/testing's, on loopback), every service in its own process as
// deployed. Prints the memory high-water mark (VmHWM, reset after a warm-up) of the gateway and
// mail-send beside the bytes they moved per second: streamed, memory must not grow with
// --messages x --mb.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createTestContext, freePort, signUpTenant, startTestRelay, waitFor } from '@mailroom/testing';
import { arg, startProcess } from './common.mjs';

const MESSAGES = arg('messages', 10);
const MB = arg('mb', 20);
const DOMAIN = 'bench.test';
const children = [];
const now = () => performance.now();
const MiB = 1024 * 1024;

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
function status(pid, field) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line)[1]) * 1024;
}

/** Resets the process's peak RSS to its current RSS (Linux: clear_refs 5). */
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const smtpPort = await freePort();
const relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
const ctx = await createTestContext({
  // info: the processes' "started" lines give their endpoints (common.mjs startProcess).
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  MIGRATE_ON_START: 'true',
  MAIL_DOMAIN: DOMAIN,
  SMTP_PORT: String(smtpPort),
  SMTP_HOST: '127.0.0.1',
  RSPAMD_URL: 'off',
  RATE_LIMIT_PER_SECOND: '0',
  SEND_RATE_PER_INBOX_PER_MINUTE: '0',
  SEND_RATE_PER_ORG_PER_MINUTE: '0',
  SMTP_RELAY_URL: relay.url,
  DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  DKIM_SELECTOR: 'mailroom',
  RPC_TIMEOUT_MS: '10000',
});
try {
  const endpoints = {};
  const pids = {};
  for (const name of ['orgs', 'auth', 'mailbox', 'mail-send', 'webhooks', 'mail-ingest', 'gateway']) {
    const started = await startProcess(name, ctx.env, { children });
    Object.assign(endpoints, started.endpoints);
    pids[name] = started.child.pid;
  }
  const { api, key } = await signUpTenant(endpoints.http, 'bench@example.com');
  const inbox = (await api.post('/api/v1/inboxes', { username: 'reports' })).body;

  /** Uploads `file` (multipart, as curl -F does) and sends it to `to`; resolves when the API answered. */
  async function uploadAndSend(file, to) {
    const form = new FormData();
    form.append('file', new Blob([file], { type: 'application/pdf' }), 'report.pdf');
    const up = await fetch(`${endpoints.http}/api/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const uploaded = await up.json();
    if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${JSON.stringify(uploaded)}`);
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to, subject: 'Report', text_body: 'Attached.', attachments: [{ attachment_id: uploaded.attachment_id }] });
    if (sent.status !== 200) throw new Error(`send answered ${sent.status}: ${JSON.stringify(sent.body)}`);
  }

  // Warm-up: one 1 MB file end to end (connections, JIT, buckets).
  await uploadAndSend(randomBytes(MiB), 'warm@sender.test');
  await waitFor(() => relay.received.length >= 1, { timeoutMs: 60_000, what: 'the warm-up relayed' });

  const watched = { gateway: pids.gateway, 'mail-send': pids['mail-send'], mailbox: pids.mailbox };
  const before = {};
  for (const [name, pid] of Object.entries(watched)) {
    resetPeak(pid);
    before[name] = status(pid, 'VmRSS');
  }
  const files = Array.from({ length: MESSAGES }, () => randomBytes(MB * MiB));
  const digests = files.map((f) => createHash('sha256').update(f).digest('hex'));
  const started = now();
  await Promise.all(files.map((f, i) => uploadAndSend(f, `r${i}@sender.test`)));
  const answered = now() - started;
  const recipients = files.map((_, i) => `r${i}@sender.test`);
  const relayedTo = (rcpt) => relay.received.filter((m) => m.rcptTo.includes(rcpt));
  await waitFor(() => recipients.every((r) => relayedTo(r).length > 0), { timeoutMs: 600_000, intervalMs: 50, what: `${MESSAGES} messages relayed` });
  const elapsed = now() - started;
  const peak = {};
  for (const [name, pid] of Object.entries(watched)) peak[name] = status(pid, 'VmHWM');

  const relayed = recipients.map((r) => relayedTo(r)[0]);
  const duplicates = relay.received.length - new Set(relay.received.map((m) => m.rcptTo.join(','))).size;
  const outBytes = relayed.reduce((n, m) => n + m.raw.length, 0);
  const inBytes = MESSAGES * MB * MiB;
  // Byte-identical: each relayed message carries one of the files, base64-encoded in its MIME.
  const { simpleParser } = await import('mailparser');
  const sent = new Set();
  for (const m of relayed) sent.add(createHash('sha256').update((await simpleParser(m.raw)).attachments[0].content).digest('hex'));
  const identical = digests.every((d) => sent.has(d));

  const mb = (n) => `${(n / MiB).toFixed(1)} MB`;
  console.log(`\nbench:attachments — ${MESSAGES} uploads of ${MB} MB at once, each sent by reference (DKIM RSA-2048) to an SMTP relay on loopback; one process per service\n`);
  console.log(`  uploaded ${mb(inBytes)} and relayed ${mb(outBytes)} (MIME, base64) in ${(elapsed / 1000).toFixed(1)} s: ${mb(inBytes / (elapsed / 1000))}/s in, ${mb(outBytes / (elapsed / 1000))}/s out (API answered every send after ${(answered / 1000).toFixed(1)} s)`);
  console.log(`  attachments byte-identical (SHA-256): ${identical ? 'yes' : 'NO'}; messages relayed twice (a hand-over retried): ${duplicates}`);
  for (const name of Object.keys(watched)) {
    console.log(`  ${name.padEnd(10)} RSS before ${mb(before[name]).padStart(9)}   high-water mark ${mb(peak[name]).padStart(9)}   growth ${mb(peak[name] - before[name]).padStart(9)}   (files moved: ${mb(inBytes)})`);
  }
  if (!identical) process.exitCode = 1;
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 2000));
  await relay.close();
  await ctx.cleanup();
}
