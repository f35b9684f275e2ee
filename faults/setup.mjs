// What the fault campaign and bench:scale share: the servers (PostgreSQL of their own, three
// NATS nodes with R3 streams), the DNS zone of the senders, the relay sink and the webhook
// receivers, a tenant with inboxes and two subscribed endpoints, and the platform's processes.
// Every port is fixed, in the 34xxx/35xxx ranges (FAULTS_PORT_BASE moves them all).
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_TYPES } from '@mailroom/contracts';
import { provisionBus } from '@mailroom/messaging';
import { connectTestBus, createTestContext, signUpTenant, startDnsServer } from '@mailroom/testing';
import { startPlatform, startReceiver, startRelaySink } from './platform.mjs';
import { say, startNatsCluster, startOwnPostgres } from './servers.mjs';

const BASE = Number(process.env.FAULTS_PORT_BASE ?? 34222);
/** Every port the run listens on, from BASE (34222): NATS 34222-4, monitoring 34822-4, routes 35222-4, the rest 354xx (bench:scale: BASE 34322). */
export const PORTS = {
  nats: [BASE, BASE + 1, BASE + 2],
  monitor: [BASE + 600, BASE + 601, BASE + 602],
  routes: [BASE + 1000, BASE + 1001, BASE + 1002],
  postgres: BASE + 1210,
  dns: BASE + 1211,
  sink: BASE + 1212,
  receivers: [BASE + 1213, BASE + 1214],
  http: BASE + 1220,
  smtp: (i) => BASE + 1230 + i,
  health: (n) => BASE + 1250 + n,
  bareSmtp: BASE + 1215,
};
export const MAIL_DOMAIN = 'faults.test';
export const INBOXES = 10;
export const REPLY_TOKEN = /faults-reply-\d+/;

/**
 * Servers, edges and context, without the platform: `up.platform(counts)` starts it.
 * `up.stop()` stops everything and removes the run's directory.
 */
export async function bringUp({ replicas = 3, extraEnv = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-faults-'));
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const stops = [];
  const up = { dir, logs, stops };
  up.stop = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => say(`stopping: ${err.message}`));
    if (!process.env.FAULTS_KEEP) rmSync(dir, { recursive: true, force: true });
  };
  try {
    say(`run directory ${dir} (logs in ${logs}; FAULTS_KEEP=1 keeps it)`);
    up.postgres = await startOwnPostgres(join(dir, 'postgres'), PORTS.postgres);
    stops.push(() => up.postgres.stop());
    up.nats = await startNatsCluster(join(dir, 'nats'), { clientPorts: PORTS.nats, routePorts: PORTS.routes, monitorPorts: PORTS.monitor });
    stops.push(() => up.nats.stop());
    say(`PostgreSQL on ${PORTS.postgres}, NATS cluster on ${PORTS.nats.join(', ')}`);
    // The test context (database, namespace, every identity's credentials) on these servers.
    process.env.TEST_DATABASE_URL = up.postgres.url;
    process.env.TEST_NATS_URL = up.nats.url;
    process.env.TEST_NATS_AUTH_DIR = up.nats.authDir;
    up.dns = await startDnsServer(
      [
        { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
        { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
      ],
      { port: PORTS.dns },
    );
    stops.push(() => up.dns.close());
    up.sink = await startRelaySink(PORTS.sink, REPLY_TOKEN);
    stops.push(() => up.sink.close());
    up.receivers = await Promise.all(PORTS.receivers.map((p) => startReceiver(p)));
    stops.push(() => Promise.all(up.receivers.map((r) => r.close())));
    up.ctx = await createTestContext(
      {
        LOG_LEVEL: 'info',
        MIGRATE_ON_START: 'true',
        MAIL_DOMAIN,
        DNS_SERVERS: up.dns.servers,
        RSPAMD_URL: 'off',
        RATE_LIMIT_PER_SECOND: '0',
        SEND_RATE_PER_INBOX_PER_MINUTE: '0',
        SEND_RATE_PER_ORG_PER_MINUTE: '0',
        SMTP_RELAY_URL: `smtp://127.0.0.1:${PORTS.sink}`,
        SMTP_MAX_CLIENTS: '1000',
        SMTP_MAX_CONNECTIONS_PER_IP: '1000',
        SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: '0',
        WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
        NATS_STREAM_REPLICAS: String(replicas),
        ...extraEnv,
      },
      { bus: 'empty' },
    );
    // As the migrate step does: every stream and bucket at R3 (createTestContext's would be R1).
    const migrate = await connectTestBus(up.ctx.env, 'migrate', 'faults-provision');
    await provisionBus(migrate, { replicas });
    await migrate.drain();
    up.bus = await connectTestBus(up.ctx.env, 'tests', 'faults');
    stops.push(() => up.bus.drain());
  } catch (err) {
    process.env.FAULTS_KEEP = '1';
    say(`bringing the servers up failed; logs kept in ${dir}`);
    await up.stop();
    throw err;
  }
  let health = 0;
  up.platform = async (counts, first = 0) => {
    const ports = (service, i) => ({
      HEALTH_PORT: String(PORTS.health(health++)),
      ...(service === 'gateway' ? { HTTP_PORT: String(PORTS.http), HTTP_HOST: '127.0.0.1' } : {}),
      ...(service === 'mail-ingest' ? { SMTP_PORT: String(PORTS.smtp(i)), SMTP_HOST: '127.0.0.1' } : {}),
    });
    const platform = await startPlatform(up.ctx.env, counts, ports, logs, first);
    stops.push(() => platform.stop());
    return platform;
  };
  return up;
}

/** A tenant (signed up, with an API key), INBOXES inboxes, and one endpoint per receiver subscribed to every event type. */
export async function tenant(up) {
  const base = `http://127.0.0.1:${PORTS.http}`;
  const t = await signUpTenant(base, 'faults@example.com');
  const inboxes = [];
  for (let i = 0; i < INBOXES; i++) {
    const res = await t.api.post('/api/v1/inboxes', { username: `agent${i}` });
    if (res.status !== 201) throw new Error(`inbox creation answered ${res.status}: ${res.text}`);
    inboxes.push(res.body);
  }
  for (const r of up.receivers) {
    const res = await t.api.post('/api/v1/webhooks/endpoints', { url: r.url, events: EVENT_TYPES, description: 'fault campaign' });
    if (res.status !== 201) throw new Error(`endpoint creation answered ${res.status}: ${res.text}`);
    r.secret = res.body.secret;
  }
  return { ...t, inboxes };
}
