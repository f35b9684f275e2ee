/**
 * Metrics as a new user sees them: mail received over SMTP and sent through the API leaves
 * through a real relay (the test provider) that delivers, bounces and reports a complaint;
 * then activity, summary and deliverability show exactly those events in their hours, the
 * deliverability warnings name the inbox, and a replay of the stream gives the same answers.
 * Bad ranges and other tenants' inboxes answer 400 and 404 in the error shape.
 */
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { EventEnvelope } from '@mailroom/contracts';
import { createLogger } from '@mailroom/platform';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { replayRollups } from '@mailroom/metrics';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicB64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({
    feedbackTo: { host: '127.0.0.1', port: smtpPort },
    hostname: 'relay.test',
    behaviour: (rcpt) => {
      const local = rcpt.split('@')[0]!;
      if (local === 'gone') return 'bounce';
      if (local === 'angry') return 'complain';
      return 'deliver';
    },
  });
});
const { api, events: tap, env, signUp } = usePlatform({
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
  }),
  dns: [
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: `mailroom._domainkey.${DOMAIN}`, type: 'TXT', text: `v=DKIM1; k=rsa; p=${publicB64}` },
  ],
  events: true,
});
afterAll(async () => {
  await relay?.close();
});

const HOUR = 3_600_000;
interface Bucket {
  start: string;
  received: number;
  sent: number;
  delivered: number;
  bounced_hard: number;
  complained: number;
  rejected: number;
}
const hourOf = (iso: string) => new Date(Math.floor(Date.parse(iso) / HOUR) * HOUR).toISOString();

/** The tally the rollups should hold for these events, per hour. */
function tallyByHour(events: EventEnvelope[]): Map<string, Record<string, number>> {
  const byHour = new Map<string, Record<string, number>>();
  for (const e of events) {
    const hour = hourOf(e.timestamp);
    const t = byHour.get(hour) ?? { received: 0, sent: 0, delivered: 0, bounced_hard: 0, bounced_soft: 0, complained: 0, rejected: 0 };
    if (e.type === 'message.received') t.received!++;
    if (e.type === 'message.sent') t.sent!++;
    if (e.type === 'message.delivered') t.delivered!++;
    if (e.type === 'message.bounced') t[e.data.bounce_type === 'Permanent' ? 'bounced_hard' : 'bounced_soft']!++;
    if (e.type === 'message.complained') t.complained!++;
    if (e.type === 'message.rejected') t.rejected!++;
    byHour.set(hour, t);
  }
  return byHour;
}

describe('metrics of real mail', () => {
  let inbox: { inbox_id: string; address: string };
  let range: { from: string; to: string };
  let started: number;

  beforeAll(async () => {
    started = Date.now();
    inbox = (await api.post('/api/v1/inboxes', { username: 'metered' })).body;
    const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    for (const subject of ['First', 'Second']) await smtp.sendMail({ from: 'ada@sender.test', to: inbox.address, subject, text: 'Hello.' });
    const sends: string[] = [];
    for (const to of ['ok1@sender.test', 'ok2@sender.test', 'gone@sender.test', 'angry@sender.test']) {
      const res = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to, subject: `To ${to}`, text_body: 'Hi.' });
      expect(res.status).toBe(200);
      sends.push(res.body.message_id);
    }
    const mine = (e: EventEnvelope) => 'inbox_id' in e.data && e.data.inbox_id === inbox.inbox_id;
    await waitFor(
      () => {
        const t = tallyByHour(tap.events.filter(mine));
        const all = [...t.values()].reduce((a, b) => a + b.received! + b.sent! + b.delivered! + b.bounced_hard! + b.complained!, 0);
        return all >= 2 + 4 + 3 + 1 + 1;
      },
      { timeoutMs: 60_000, what: 'the mail received, sent, delivered, bounced and complained about' },
    );
    // The bounced address is suppressed now: another send to it is refused (message.rejected).
    const refused = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, { to: 'gone@sender.test', subject: 'Again', text_body: 'Hi?' });
    expect(refused.body.error.code).toBe('blocked_recipient');
    await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id);
    range = { from: new Date(started - HOUR).toISOString(), to: new Date(Date.now() + 1).toISOString() };
    // Its waits are bounded (60 s for the relay's reports): the hook's bound is above them.
  }, 120_000);

  it('shows exactly those events in their hour buckets, with every other hour at zero', async () => {
    const expected = tallyByHour(tap.events.filter((e) => 'inbox_id' in e.data && e.data.inbox_id === inbox.inbox_id));
    const url = `/api/v1/metrics/activity?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`;
    const activity = await waitFor(
      async () => {
        const res = await api.get(url);
        const busy = (res.body.buckets as Bucket[]).filter((b) => b.received || b.sent || b.delivered || b.bounced_hard || b.complained || b.rejected);
        return busy.length === expected.size && busy.every((b) => b.rejected === expected.get(b.start)?.rejected) && res;
      },
      { timeoutMs: 20_000, what: 'the rollups to catch up' },
    );
    expect(activity.status).toBe(200);
    expect(activity.body.from).toBe(hourOf(range.from));
    for (const b of activity.body.buckets) {
      expect(Date.parse(b.end) - Date.parse(b.start)).toBe(HOUR);
      const want = expected.get(b.start) ?? { received: 0, sent: 0, delivered: 0, bounced_hard: 0, bounced_soft: 0, complained: 0, rejected: 0 };
      expect(b).toMatchObject(want);
    }
    expect(activity.body.buckets.length).toBe((Date.parse(activity.body.to) - Date.parse(activity.body.from)) / HOUR);

    const summary = await api.get(`/api/v1/metrics/summary?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`);
    expect(summary.body.totals).toEqual({ received: 2, sent: 4, delivered: 3, bounced_hard: 1, bounced_soft: 0, complained: 1, rejected: 1, rejected_by_reason: { blocked_recipient: 1, rate_limited: 0, account_paused: 0 } });
    expect(Date.parse(summary.body.previous.to)).toBe(Date.parse(summary.body.from));
    expect(summary.body.previous.totals.sent).toBe(0);
    // The inbox filter: the same, as all of it is this inbox's.
    const one = await api.get(`/api/v1/metrics/summary?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}&inbox_id=${inbox.inbox_id}`);
    expect(one.body).toMatchObject({ inbox_id: inbox.inbox_id, totals: summary.body.totals });
    // The defaults: the last 24 hours, this month (the events are in them unless the month just began).
    const day = await api.get('/api/v1/metrics/activity');
    expect(day.body.buckets).toHaveLength(24);
    expect(day.body.buckets.reduce((n: number, b: { sent: number }) => n + b.sent, 0)).toBe(4);
  });

  it('rates deliverability and warns of complaints above 0.1% and hard bounces above 2%, naming the inbox', async () => {
    const res = await api.get('/api/v1/metrics/deliverability');
    expect(res.status).toBe(200);
    expect(res.body.rates).toEqual({ delivery: 0.75, hard_bounce: 0.25, soft_bounce: 0, complaint: 0.25, rejection: 0.2 });
    expect(res.body.score).toBe(0);
    expect(res.body.latency_ms.count).toBe(3);
    expect(res.body.latency_ms.p50).toEqual(expect.any(Number));
    expect(res.body.latency_ms.p95).toBeGreaterThanOrEqual(res.body.latency_ms.p50);
    expect(res.body.warnings.map((w: { code: string }) => w.code)).toEqual(['complaint_rate', 'hard_bounce_rate']);
    expect(res.body.warnings[0]).toMatchObject({ rate: 0.25, threshold: 0.001, top_inboxes: [{ inbox_id: inbox.inbox_id, count: 1, sent: 4 }] });
    expect(res.body.warnings[0].message).toContain(inbox.inbox_id);
  });

  it('gives the same answers after a replay of the stream into emptied rollups', async () => {
    const q = `from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`;
    const paths = [`/api/v1/metrics/activity?${q}`, `/api/v1/metrics/summary?${q}`, `/api/v1/metrics/deliverability?${q}`];
    const before = await Promise.all(paths.map(async (p) => (await api.get(p)).body));
    const replay = await replayRollups(env, createLogger({ service: 'test', level: 'silent' }));
    expect(replay.skipped).toBe(0);
    expect(replay.counted).toBe(replay.read);
    const after = await Promise.all(paths.map(async (p) => (await api.get(p)).body));
    expect(after).toEqual(before);
  });

  it('refuses bad ranges with 400 naming the field, and inboxes not of this environment with 404', async () => {
    const bad = async (query: string, path: string) => {
      const res = await api.get(`/api/v1/metrics/activity?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    };
    await bad('from=yesterday', 'query.from');
    await bad('to=2026-13-01T00:00:00Z', 'query.to');
    await bad('from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'query.to');
    await bad('from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'query.to');
    await bad(`from=${new Date(Date.now() + 2 * HOUR).toISOString()}`, 'query.from');
    await bad('inbox_id=not-an-id', 'query.inbox_id');

    const other = await signUp();
    const foreign = await other.api.get(`/api/v1/metrics/summary?inbox_id=${inbox.inbox_id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await other.api.get('/api/v1/metrics/summary')).body.totals.sent).toBe(0);
    const quiet = (await api.post('/api/v1/inboxes', { username: 'quiet' })).body;
    expect((await api.get(`/api/v1/metrics/deliverability?inbox_id=${quiet.inbox_id}`)).status).toBe(404);
  });
});
