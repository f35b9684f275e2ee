/**
 * Per-domain metrics as a new user sees them (issue 27): mail over SMTP to two inboxes on a
 * verified custom domain and one on MAIL_DOMAIN; `domain_id` on activity, summary and
 * deliverability counts exactly the domain's inboxes (metrics learned each inbox's domain from
 * mailbox and domains), with `inbox_id` it must be consistent, another tenant's or an unknown
 * domain is a 404, and a replay of the stream gives identical per-domain answers.
 */
import nodemailer from 'nodemailer';
import { createLogger } from '@mailroom/platform';
import { publishedRecord, waitFor, type Tenant } from '@mailroom/testing';
import { replayRollups } from '@mailroom/metrics';
import { usePlatform } from './fixtures';

const platform = usePlatform({
  env: () => ({
    RSPAMD_URL: 'off',
    DOMAIN_CHECK_INTERVAL_MS: '3600000',
    PLAN_FREE_LIMITS: 'inboxes=1000,domains=10,members=1000,environments=10,webhook_endpoints=10',
    RATE_LIMIT_PER_SECOND: '0',
  }),
  dns: [{ name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' }],
  tenant: false,
});
const { anon: api, dns, signUp, env } = platform;

interface Rec {
  kind: string;
  type: 'MX' | 'TXT' | 'CNAME';
  name: string;
  value: string;
  priority: number | null;
}

/** A domain of the tenant, its records served by the loopback DNS server, verified. */
async function verifiedDomain(t: Tenant, name: string): Promise<string> {
  const created = await api.post('/api/v1/domains', { domain_name: name }, { token: t.key });
  expect(created.status).toBe(201);
  for (const r of created.body.records as Rec[]) dns.add(publishedRecord(r));
  const res = await api.post(`/api/v1/domains/${created.body.domain_id}/verify`, undefined, { token: t.key });
  expect(res.body.verification_status).toBe('verified');
  return created.body.domain_id as string;
}

async function inbox(t: Tenant, username: string, domain?: string): Promise<{ inbox_id: string; address: string }> {
  const res = await api.post('/api/v1/inboxes', { username, ...(domain ? { domain } : {}) }, { token: t.key });
  expect(res.status).toBe(201);
  return res.body;
}

/** Sends until the edge takes it (it learns of a verified domain through a fact, within moments). */
const send = (to: string, subject: string) =>
  waitFor(
    async () => {
      try {
        await nodemailer
          .createTransport({ host: '127.0.0.1', port: platform.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
          .sendMail({ from: 'someone@sender.test', to, subject, text: 'Hello there.' });
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 10_000, what: `the edge to take mail for ${to}` },
  );

describe('metrics per custom domain', () => {
  let t: Tenant;
  let domainId: string;
  let a: { inbox_id: string };
  let b: { inbox_id: string };
  let plain: { inbox_id: string };
  const get = (path: string, tenant: Tenant = t) => api.get(path, { token: tenant.key });

  beforeAll(async () => {
    t = await signUp();
    domainId = await verifiedDomain(t, 'metered.example.org');
    a = await inbox(t, 'a', 'metered.example.org');
    b = await inbox(t, 'b', 'metered.example.org');
    plain = await inbox(t, 'plain');
    const plainAddress = (await get(`/api/v1/inboxes/${plain.inbox_id}`)).body.address as string;
    await send('a@metered.example.org', 'one');
    await send('a@metered.example.org', 'two');
    await send('b@metered.example.org', 'three');
    await send(plainAddress, 'four');
    await waitFor(async () => (await get('/api/v1/metrics/summary')).body.totals.received === 4, { timeoutMs: 30_000, what: 'the four messages counted' });
  }, 90_000);

  it("counts exactly the domain's inboxes on activity, summary and deliverability", async () => {
    const summary = await get(`/api/v1/metrics/summary?domain_id=${domainId}`);
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ inbox_id: null, domain_id: domainId, totals: { received: 3, sent: 0 } });
    const activity = await get(`/api/v1/metrics/activity?domain_id=${domainId}`);
    expect(activity.body.domain_id).toBe(domainId);
    expect(activity.body.buckets.reduce((n: number, x: { received: number }) => n + x.received, 0)).toBe(3);
    const deliverability = await get(`/api/v1/metrics/deliverability?domain_id=${domainId}`);
    expect(deliverability.status).toBe(200);
    expect(deliverability.body).toMatchObject({ domain_id: domainId, counts: { received: 3 }, score: null, warnings: [] });
    // The whole environment still has all four.
    expect((await get('/api/v1/metrics/summary')).body).toMatchObject({ domain_id: null, totals: { received: 4 } });
  });

  it("with an inbox: the inbox's figures when it is on the domain, a 400 when it is not", async () => {
    const both = await get(`/api/v1/metrics/summary?domain_id=${domainId}&inbox_id=${a.inbox_id}`);
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ inbox_id: a.inbox_id, domain_id: domainId, totals: { received: 2 } });
    const other = await get(`/api/v1/metrics/activity?domain_id=${domainId}&inbox_id=${plain.inbox_id}`);
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: 'invalid_request', request_id: expect.any(String), details: [{ path: 'query.inbox_id', message: `not on domain ${domainId}` }] });
    expect(other.body.error.message).toContain('on no custom domain');
  });

  it("answers 404 for another tenant's domain and an unknown one, 400 for a malformed one", async () => {
    const stranger = await signUp();
    const theirs = await get(`/api/v1/metrics/summary?domain_id=${domainId}`, stranger);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toMatchObject({ code: 'not_found', request_id: expect.any(String) });
    for (const path of ['activity', 'summary', 'deliverability']) {
      const unknown = await get(`/api/v1/metrics/${path}?domain_id=dom_01jzzzzzzzzzzzzzzzzzzzzzzz`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
    }
    const malformed = await get('/api/v1/metrics/summary?domain_id=metered.example.org');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.map((d: { path: string }) => d.path)).toContain('query.domain_id');
  });

  it('gives identical per-domain answers after a replay of the stream', async () => {
    const paths = ['activity', 'summary', 'deliverability'].flatMap((p) => [`/api/v1/metrics/${p}?domain_id=${domainId}`, `/api/v1/metrics/${p}?domain_id=${domainId}&inbox_id=${b.inbox_id}`]);
    const before = await Promise.all(paths.map(async (p) => (await get(p)).body));
    const replay = await replayRollups(env, createLogger({ service: 'test', level: 'silent' }));
    expect(replay.skipped).toBe(0);
    const after = await Promise.all(paths.map(async (p) => (await get(p)).body));
    expect(after).toEqual(before);
  });
});
