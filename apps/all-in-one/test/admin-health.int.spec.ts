/**
 * The platform's health and alerts as an operator sees them (issue 28, parts 2, 3 and 6):
 * every service up and health ok; the webhooks service (run as a unit of its own) stopped:
 * health degraded naming it, service_down firing and mailed to ALERT_EMAIL_TO through the
 * relay; webhooks started again: both recover, and the history records each change. Then an
 * alert acknowledged, muted and unmuted, and bad input answered in the error shape.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { WebhookReceiver, bootServices, freePort, startTestRelay, waitFor, type BootedServices, type TestRelay } from '@mailroom/testing';
import { SERVICES, SERVICE_NAMES } from '../src/platform';
import { usePlatform } from './fixtures';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'services', 'admin', 'dist', 'cli.js');
const OPERATOR = 'oncall@operators.test';
const HOOK_SECRET = 'whsec_operator-alert-secret';

let relay: TestRelay;
let hook: WebhookReceiver;
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test' });
  hook = await WebhookReceiver.start({ secrets: [HOOK_SECRET] });
});

// Every service but webhooks in the platform; webhooks runs on its own, so it can stop and start.
const { anon, env, tenant } = usePlatform({
  services: SERVICE_NAMES.filter((s) => s !== 'webhooks'),
  env: () => ({
    MAIL_DOMAIN: 'agents.test',
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    HEALTH_SAMPLE_INTERVAL_MS: '1000',
    ALERT_EMAIL_TO: OPERATOR,
    ALERT_WEBHOOK_URL: hook.url('/alerts'),
    ALERT_WEBHOOK_SECRET: HOOK_SECRET,
    ALERT_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
  }),
});
let webhooks: BootedServices | undefined;
let key: string;

beforeAll(async () => {
  webhooks = await bootServices([SERVICES.webhooks], env);
  const { stdout } = await run(process.execPath, [CLI, 'create-key', '--name', 'health test'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  key = stdout.trim();
});
afterAll(async () => {
  await webhooks?.stop();
  await relay?.close();
  await hook?.close();
});

const bound = { timeoutMs: 20_000, intervalMs: 200 };
const health = () => anon.get('/api/v1/admin/health', { token: key });
const alertOf = async (name: string) => (await anon.get('/api/v1/admin/alerts', { token: key })).body.data.find((a: { key: string }) => a.key === name);

/** The alert mails to the operator about `alert` with this notice, parsed, of those the relay received from the `since`-th on. */
async function alertMails(alert: string, notice: 'firing' | 'resolved', since = 0) {
  const mails = await Promise.all(relay.received.slice(since).filter((m) => m.rcptTo.includes(OPERATOR)).map((m) => simpleParser(m.raw)));
  return mails.filter((m) => m.headers.get('x-mailroom-template') === 'alert' && m.subject === `Mailroom alert ${notice}: ${alert}`);
}

describe('health and alerts through an outage of the webhooks service', () => {
  it('is ok with every service up, names each service with its instances, and checks the data stores, the bus and the relay', async () => {
    const ok = await waitFor(async () => {
      const res = await health();
      return res.status === 200 && res.body.status === 'ok' && res.body;
    }, { ...bound, what: 'health ok' });
    expect(ok.reasons).toEqual([]);
    expect(ok.services.map((s: { name: string }) => s.name).sort()).toEqual([...SERVICE_NAMES].sort());
    const hooks = ok.services.find((s: { name: string }) => s.name === 'webhooks');
    expect(hooks).toMatchObject({ status: 'up', instances: [{ instance_id: expect.any(String), version: expect.any(String), uptime_seconds: expect.any(Number) }] });
    expect(ok.postgres).toMatchObject({ reachable: true });
    expect(ok.nats).toMatchObject({ reachable: true, jetstream: { reachable: true } });
    expect(ok.nats.jetstream.streams.map((s: { name: string }) => s.name)).toContain(`${env.BUS_NAMESPACE}_EVENTS`);
    expect(ok.nats.jetstream.consumers).toContainEqual(expect.objectContaining({ name: 'webhooks--dispatch', pending: expect.any(Number) }));
    expect(ok.rspamd).toBeNull();
    expect(ok.relay).toMatchObject({ reachable: true, port: relay.port });
    // The alias answers the same document.
    expect((await anon.get('/admin/health', { token: key })).body).toMatchObject({ status: 'ok' });
  });

  it('is degraded naming webhooks while it is down, with service_down firing and mailed; both recover when it is back', async () => {
    await waitFor(async () => (await alertOf('service_down'))?.state === 'ok', { ...bound, what: 'service_down ok before the outage' });
    const since = relay.received.length;
    await webhooks!.stop();
    webhooks = undefined;
    const degraded = await waitFor(async () => {
      const res = await health();
      return res.body.status === 'degraded' && res.body;
    }, { ...bound, what: 'health degraded' });
    expect(degraded.reasons).toEqual([{ component: 'service:webhooks', status: 'degraded', message: 'service webhooks has no running instance' }]);
    expect(degraded.services.find((s: { name: string }) => s.name === 'webhooks')).toMatchObject({ status: 'down', instances: [] });

    const firing = await waitFor(async () => {
      const a = await alertOf('service_down');
      return a?.state === 'firing' && a;
    }, { ...bound, what: 'service_down firing' });
    expect(firing.detail).toContain('webhooks: 0 instance(s)');
    expect(firing.transitions[0]).toMatchObject({ from: 'ok', to: 'firing' });
    const [mail] = await waitFor(async () => {
      const found = await alertMails('service_down', 'firing', since);
      return found.length > 0 && found;
    }, { ...bound, what: 'the firing alert mailed to the operator' });
    expect(mail!.text).toContain('webhooks: 0 instance(s)');
    // And the operator's webhook, signed as tenant webhooks are.
    const posted = await waitFor(() => hook.received.find((d) => d.body?.type === 'alert.firing' && d.body.data.key === 'service_down' && d.body.created_at === firing.last_fired_at), { ...bound, what: 'the alert webhook' });
    expect(posted).toMatchObject({ path: '/alerts', verifiedWith: HOOK_SECRET, body: { data: { notice: 'firing', detail: expect.stringContaining('webhooks: 0 instance(s)') } } });

    webhooks = await bootServices([SERVICES.webhooks], env);
    await waitFor(async () => (await health()).body.status === 'ok', { ...bound, what: 'health ok again' });
    const cleared = await waitFor(async () => {
      const a = await alertOf('service_down');
      return a?.state === 'ok' && a;
    }, { ...bound, what: 'service_down ok again' });
    expect(cleared.last_resolved_at).toEqual(expect.any(String));
    await waitFor(async () => (await alertMails('service_down', 'resolved', since)).length > 0, { ...bound, what: 'the resolved notice mailed' });

    // The history holds the changes as such: degraded, then ok.
    const changes = await anon.get('/api/v1/admin/health/history?changes_only=true', { token: key });
    expect(changes.status).toBe(200);
    const statuses = changes.body.data.map((s: { status: string; status_changed: boolean }) => [s.status, s.status_changed]);
    expect(statuses.slice(-2)).toEqual([
      ['degraded', true],
      ['ok', true],
    ]);
    // Every sample names the one before it; the changes are those whose status differs.
    const all = (await anon.get('/admin/health/history?limit=100', { token: key })).body.data as { id: string; status: string; previous_status: string | null; status_changed: boolean }[];
    all.forEach((sample, i) => {
      if (i > 0) expect(sample.previous_status).toBe(all[i - 1]!.status);
      expect(sample.status_changed).toBe(sample.status !== sample.previous_status);
    });
    expect(all.filter((x) => x.status_changed).map((x) => x.id)).toEqual(changes.body.data.map((x: { id: string }) => x.id));
  });
});

describe('an operator acts on alerts', () => {
  it('acknowledges a firing alert, mutes it until a time and unmutes it; thresholds change and go back', async () => {
    // Two instances of every service asked for: service_down fires at once.
    const raised = await anon.patch('/api/v1/admin/alerts/service_down', { thresholds: { min_instances: 2 } }, { token: key });
    expect(raised.status).toBe(200);
    expect(raised.body.thresholds).toEqual({ min_instances: 2 });
    await waitFor(async () => (await alertOf('service_down'))?.state === 'firing', { ...bound, what: 'service_down firing on the new threshold' });

    const acked = await anon.patch('/admin/alerts/service_down', { acknowledge: true }, { token: key });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ state: 'acknowledged', acknowledged_at: expect.any(String) });
    expect(acked.body.transitions[0]).toMatchObject({ from: 'firing', to: 'acknowledged', reason: 'acknowledged by an operator' });

    const until = new Date(Date.now() + 3_600_000).toISOString();
    const muted = await anon.patch('/api/v1/admin/alerts/service_down', { mute_until: until }, { token: key });
    expect(muted.body).toMatchObject({ state: 'muted', muted_until: until });
    // Evaluations go on while muted; the state stays.
    const evaluated = muted.body.evaluated_at;
    await waitFor(async () => (await alertOf('service_down'))?.evaluated_at !== evaluated, { ...bound, what: 'another evaluation' });
    expect((await alertOf('service_down')).state).toBe('muted');

    const unmuted = await anon.patch('/api/v1/admin/alerts/service_down', { mute_until: null, thresholds: { min_instances: 1 } }, { token: key });
    expect(unmuted.body).toMatchObject({ muted_until: null, thresholds: { min_instances: 1 } });
    await waitFor(async () => (await alertOf('service_down'))?.state === 'ok', { ...bound, what: 'service_down ok on the old threshold' });
  });

  it('lists every rule with its thresholds and state', async () => {
    const res = await anon.get('/api/v1/admin/alerts', { token: key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((a: { key: string }) => a.key).sort()).toEqual(
      ['bounce_rate', 'complaint_rate', 'consumer_lag', 'disk_usage', 'domain_verification_failed', 'relay_unreachable', 'service_down', 'webhook_endpoint_disabled'],
    );
    const of = (k: string) => res.body.data.find((a: { key: string }) => a.key === k);
    expect(of('complaint_rate').thresholds).toMatchObject({ max_rate: 0.001 });
    // Measured by metrics, webhooks and domains over the bus (service-only operations).
    expect(of('complaint_rate')).toMatchObject({ state: 'ok', detail: '0 sent in 24 h: fewer than min_sent (100)' });
    expect(of('bounce_rate')).toMatchObject({ state: 'ok', detail: '0 sent in 24 h: fewer than min_sent (100)' });
    expect(of('webhook_endpoint_disabled')).toMatchObject({ state: 'ok', detail: '0 endpoint(s) auto-disabled in 24 h' });
    expect(of('domain_verification_failed')).toMatchObject({ state: 'ok', detail: '0 domain(s) failing verification, checked in the last 24 h' });
    expect(of('relay_unreachable')).toMatchObject({ state: 'ok', detail: `127.0.0.1:${relay.port} answers` });
  });

  it('answers bad input in the error shape: unknown keys 404, invalid thresholds and ranges 400, nothing to acknowledge 409', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const cases: [string, string, unknown, number][] = [
      ['PATCH', '/api/v1/admin/alerts/disk_full', { acknowledge: true }, 404],
      ['PATCH', '/admin/alerts/disk_full', { mute_until: null }, 404],
      ['PATCH', '/api/v1/admin/alerts/service_down', { thresholds: { min_instances: 0 } }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { thresholds: { min_instances: 1.5 } }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { thresholds: { max_ratio: 0.5 } }, 400],
      ['PATCH', '/api/v1/admin/alerts/complaint_rate', { thresholds: { max_rate: 2 } }, 400],
      ['PATCH', '/api/v1/admin/alerts/complaint_rate', { thresholds: { max_rate: 'low' } }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', {}, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { acknowledge: false }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { mute_until: past }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { mute_until: 'tomorrow' }, 400],
      ['PATCH', '/api/v1/admin/alerts/service_down', { acknowledge: true }, 409],
      ['GET', '/api/v1/admin/health/history?from=2026-01-02T00:00:00.000Z&to=2026-01-01T00:00:00.000Z', undefined, 400],
      ['GET', '/api/v1/admin/health/history?from=2026-01-01T00:00:00.000Z&to=2026-03-01T00:00:00.000Z', undefined, 400],
      ['GET', '/api/v1/admin/health/history?from=yesterday', undefined, 400],
      ['GET', '/api/v1/admin/health/history?limit=101', undefined, 400],
      ['GET', '/api/v1/admin/health/history?page_token=nope', undefined, 400],
      ['GET', '/admin/health/history?changes_only=maybe', undefined, 400],
      ['GET', '/api/v1/admin/health?verbose=1', undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await anon.request(method, path, body, { token: key });
      expect([method, path, JSON.stringify(body), res.status]).toEqual([method, path, JSON.stringify(body), status]);
      expect(res.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
    }
    const thresholds = await anon.patch('/api/v1/admin/alerts/service_down', { thresholds: { min_instances: 0 } }, { token: key });
    expect(thresholds.body.error.details).toEqual([{ path: 'thresholds.min_instances', message: 'must be at least 1' }]);
  });

  it('refuses tenant credentials and no credential on every health and alert route', async () => {
    const routes: [string, string][] = [
      ['GET', '/api/v1/admin/health'],
      ['GET', '/admin/health'],
      ['GET', '/api/v1/admin/health/history'],
      ['GET', '/admin/health/history'],
      ['GET', '/api/v1/admin/alerts'],
      ['GET', '/admin/alerts'],
      ['PATCH', '/api/v1/admin/alerts/service_down'],
      ['PATCH', '/admin/alerts/service_down'],
    ];
    for (const [method, path] of routes) {
      const body = method === 'PATCH' ? { acknowledge: true } : undefined;
      for (const token of [tenant.key, tenant.accessToken]) expect([path, (await anon.request(method, path, body, { token })).status]).toEqual([path, 403]);
      expect([path, (await anon.request(method, path, body)).status]).toEqual([path, 401]);
    }
  });
});
