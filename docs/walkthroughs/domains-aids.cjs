// What the custom-domains walkthrough needs beside the platform, in one process:
// - a DNS server on 127.0.0.1:$DNS_PORT (the project's test DNS server, libs/testing) serving
//   the records of $ZONE_FILE (a JSON array of DnsRecord), read again whenever the file changes,
//   so the walkthrough "publishes" a record by writing it there;
// - a webhook receiver on 127.0.0.1:$HOOK_PORT that checks the spec's signature
//   (HMAC-SHA256 of "<timestamp>.<raw body>" with the endpoint secret, hex, compared in constant
//   time, timestamp within 5 minutes) with the secret in $HOOK_SECRET_FILE, and appends each
//   delivery as one JSON line ({verified, body}) to $HOOK_LOG.
// Run from the repository root after `npm run build`: node docs/walkthroughs/domains-aids.cjs
const { createHmac, timingSafeEqual } = require('node:crypto');
const { appendFileSync, existsSync, readFileSync, watchFile, writeFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { startDnsServer } = require('@mailroom/testing');

const DNS_PORT = Number(process.env.DNS_PORT ?? 5354);
const HOOK_PORT = Number(process.env.HOOK_PORT ?? 8099);
const ZONE_FILE = process.env.ZONE_FILE ?? '/tmp/mailroom-zone.json';
const HOOK_SECRET_FILE = process.env.HOOK_SECRET_FILE ?? '/tmp/mailroom-hook-secret';
const HOOK_LOG = process.env.HOOK_LOG ?? '/tmp/mailroom-hook.log';

function verified(headers, body) {
  if (!existsSync(HOOK_SECRET_FILE)) return false;
  const secret = readFileSync(HOOK_SECRET_FILE, 'utf8').trim();
  const timestamp = Number(headers['x-service-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex'));
  const given = Buffer.from(String(headers['x-service-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function main() {
  if (!existsSync(ZONE_FILE)) writeFileSync(ZONE_FILE, '[]');
  const dns = await startDnsServer(JSON.parse(readFileSync(ZONE_FILE, 'utf8')), { port: DNS_PORT });
  watchFile(ZONE_FILE, { interval: 100 }, () => dns.set(JSON.parse(readFileSync(ZONE_FILE, 'utf8'))));
  const hooks = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ok = verified(req.headers, body);
      appendFileSync(HOOK_LOG, `${JSON.stringify({ verified: ok, body: JSON.parse(body.toString('utf8')) })}\n`);
      res.writeHead(ok ? 200 : 401).end();
    });
  });
  await new Promise((resolve) => hooks.listen(HOOK_PORT, '127.0.0.1', resolve));
  process.stderr.write(`DNS on ${dns.servers} from ${ZONE_FILE}; webhooks on http://127.0.0.1:${HOOK_PORT} into ${HOOK_LOG}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
