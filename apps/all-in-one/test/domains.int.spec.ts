/**
 * Custom domains through HTTP (issue 25, parts 1-4): adding one, its records served by a DNS
 * server on loopback, verification on demand and by the job, `domain.verified` delivered to a
 * signed webhook once, records that half-match, break or time out, deletion, plan and usage,
 * and the zone file checked by BIND's named-checkzone.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { startDnsServer, waitFor, WebhookReceiver, type DnsFault, type DnsServer, type Tenant, publishedRecord } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const faults: DnsFault[] = [];
let dns: DnsServer;
let receiver: WebhookReceiver;
let db: Kysely<unknown>;
const DNS_TIMEOUT_MS = 500;

beforeAll(async () => {
  dns = await startDnsServer([], { faults });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver?.close();
  await dns?.close();
});

const { anon: api, env, signUp, events } = usePlatform({
  env: () => ({
    DNS_SERVERS: dns.servers,
    DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
    DOMAIN_MX_HOST: 'mx.mailroom.test',
    DOMAIN_SPF_INCLUDE: 'spf.mailroom.test',
    DOMAIN_DMARC_RUA: 'dmarc@mailroom.test',
    BOUNCE_DOMAIN: 'bounces.mailroom.test',
    DOMAIN_CHECK_INTERVAL_MS: '100',
    DOMAIN_CHECK_BACKOFF_SECONDS: '1',
    DOMAIN_CHECK_BACKOFF_MAX_SECONDS: '2',
    PLAN_FREE_LIMITS: 'inboxes=100000,domains=3,members=1000,environments=1000,webhook_endpoints=1000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    RATE_LIMIT_PER_SECOND: '0',
  }),
  tenant: false,
  events: true,
});

beforeAll(async () => {
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
});
afterAll(async () => {
  await db?.destroy();
});

interface Rec {
  kind: string;
  type: 'MX' | 'TXT' | 'CNAME';
  name: string;
  value: string;
  priority: number | null;
  status: string;
  reason: string | null;
  found: string[];
  required: boolean;
}

async function tenantWithHook(): Promise<Tenant> {
  const t = await signUp();
  const hook = await api.post('/api/v1/webhooks/endpoints', { url: `http://127.0.0.1:${receiver.port}/${t.org_id}`, events: ['domain.verified'] }, { token: t.key });
  expect(hook.status).toBe(201);
  receiver.secrets.push(hook.body.secret);
  return t;
}

async function add(t: Tenant, domain_name: string) {
  const res = await api.post('/api/v1/domains', { domain_name }, { token: t.key });
  expect(res.status).toBe(201);
  return res.body as { domain_id: string; domain_name: string; records: Rec[]; verification_status: string };
}


/** Serves every record of the domain (one replaced, or left out with null). */
function serve(records: Rec[], change: Partial<Record<string, string | null>> = {}): void {
  for (const r of records) {
    const value = change[r.kind];
    if (value !== null) dns.add(publishedRecord(r, value));
  }
}

const kind = (d: { records: Rec[] }, k: string) => d.records.find((r) => r.kind === k)!;
const verify = (t: Tenant, id: string) => api.post(`/api/v1/domains/${id}/verify`, undefined, { token: t.key });
const deliveriesOf = (domainId: string) => receiver.received.filter((d) => d.body?.type === 'domain.verified' && d.body.data.domain_id === domainId);

describe('adding a domain', () => {
  it('stores the name in A-label form and answers the records to publish, with a 2048-bit DKIM key made for it', async () => {
    const t = await signUp();
    const d = await add(t, '  Example.COM. ');
    expect(d).toMatchObject({ domain_name: 'example.com', verification_status: 'pending', spf_status: 'pending', dkim_status: 'pending', dmarc_status: 'pending', mx_status: 'pending', catch_all_inbox_id: null, verified_at: null });
    expect(d.domain_id).toMatch(/^dom_[0-9a-z]{26}$/);
    expect(d.records.map((r) => [r.kind, r.type, r.name, r.required, r.status])).toEqual([
      ['mx', 'MX', 'example.com', false, 'pending'],
      ['spf', 'TXT', 'example.com', true, 'pending'],
      ['dkim', 'TXT', expect.stringMatching(/^mr[0-9a-z]{8}\._domainkey\.example\.com$/), true, 'pending'],
      ['dmarc', 'TXT', '_dmarc.example.com', false, 'pending'],
      ['bounce', 'CNAME', 'bounces.example.com', false, 'pending'],
    ]);
    expect(kind(d, 'mx')).toMatchObject({ value: 'mx.mailroom.test', priority: 10 });
    expect(kind(d, 'spf').value).toBe('v=spf1 include:spf.mailroom.test ~all');
    expect(kind(d, 'dmarc').value).toBe('v=DMARC1; p=none; rua=mailto:dmarc@mailroom.test');
    expect(kind(d, 'bounce').value).toBe('bounces.mailroom.test');
    const p = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(kind(d, 'dkim').value)![1]!;
    expect(createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' }).asymmetricKeyDetails?.modulusLength).toBe(2048);
    // The private key is sealed at rest and never answered.
    expect(JSON.stringify(d)).not.toMatch(/PRIVATE/);
    const { rows } = await sql<{ sealed: Buffer }>`select dkim_private_key_sealed as sealed from domains.domains where id = ${d.domain_id}`.execute(db);
    expect(rows[0]!.sealed.toString('latin1')).not.toMatch(/PRIVATE KEY/);
    // IDNA: a Unicode name is stored as its A-labels.
    expect((await add(t, 'MÜNCHEN.de')).domain_name).toBe('xn--mnchen-3ya.de');
  });

  it('refuses bad names with a 400 that says why, and a name the environment has with a 409', async () => {
    const t = await signUp();
    for (const [name, why] of [
      ['', /domain_name|empty/],
      ['example.com..', /empty label/],
      ['1.2.3.4', /IP address/],
      ['co.uk', /public suffix/],
      ['localhost', /top-level|public/],
      ['https://example.com/', /character/],
      ['exa mple.com', /character/],
      ['mailroom.localhost', /public top-level domain|own mail domain/],
    ] as const) {
      const res = await api.post('/api/v1/domains', { domain_name: name }, { token: t.key });
      expect([name, res.status, res.body.error.code]).toEqual([name, 400, 'invalid_request']);
      expect(JSON.stringify(res.body.error)).toMatch(why);
    }
    expect((await api.post('/api/v1/domains', { domain_name: 'example.com', extra: 1 }, { token: t.key })).status).toBe(400);
    await add(t, 'example.org');
    const again = await api.post('/api/v1/domains', { domain_name: 'EXAMPLE.org.' }, { token: t.key });
    expect([again.status, again.body.error.code]).toEqual([409, 'conflict']);
  });

  it('counts domains against the plan (403 plan_limit) and in the usage', async () => {
    const t = await signUp();
    for (const name of ['a.example.net', 'b.example.net', 'c.example.net']) await add(t, name);
    const over = await api.post('/api/v1/domains', { domain_name: 'd.example.net' }, { token: t.key });
    expect([over.status, over.body.error.code]).toEqual([403, 'plan_limit']);
    const usage = await api.get('/api/v1/org/usage', { token: t.key });
    expect(usage.body.usage.domains).toEqual({ used: 3, limit: 3 });
  });
});

describe('verifying', () => {
  it('checks now: missing, then half-matching, then verified; domain.verified reaches the webhook once, with the spec\'s fields', async () => {
    const t = await tenantWithHook();
    const d = await add(t, 'verify.example.com');
    const first = await verify(t, d.domain_id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ verification_status: 'pending', spf_status: 'failed', dkim_status: 'failed' });
    expect(kind(first.body, 'dkim')).toMatchObject({ status: 'failed', reason: 'missing', found: [] });
    expect(first.body.failure_reason).toMatch(/SPF record missing; DKIM record missing/);
    // The customer's own SPF record, without our include: a mismatch, with one merged record advised.
    serve(d.records, { spf: 'v=spf1 include:_spf.google.com -all', dmarc: null });
    const half = await verify(t, d.domain_id);
    expect(half.body).toMatchObject({ verification_status: 'pending', spf_status: 'failed', dkim_status: 'verified', mx_status: 'verified', bounce_status: 'verified', dmarc_status: 'failed' });
    expect(kind(half.body, 'spf')).toMatchObject({ reason: 'mismatch', found: ['v=spf1 include:_spf.google.com -all'], value: 'v=spf1 include:_spf.google.com include:spf.mailroom.test -all' });
    dns.add({ type: 'TXT', name: 'verify.example.com', text: 'v=spf1 include:_spf.google.com include:spf.mailroom.test -all' });
    // Two SPF records are an error for every receiver: still a mismatch until the old one goes.
    expect((await verify(t, d.domain_id)).body.verification_status).toBe('pending');
    dns.set([]);
    serve(d.records, { spf: 'v=spf1 include:_spf.google.com include:spf.mailroom.test -all', dmarc: null });
    const done = await verify(t, d.domain_id);
    expect(done.body).toMatchObject({ verification_status: 'verified', spf_status: 'verified', dkim_status: 'verified', dmarc_status: 'failed', failure_reason: null });
    expect(done.body.verified_at).toEqual(expect.any(String));

    const delivered = await waitFor(() => deliveriesOf(d.domain_id)[0], { what: 'domain.verified at the webhook' });
    expect(delivered.verifiedWith).toEqual(expect.any(String));
    expect(delivered.body).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'domain.verified',
      timestamp: expect.any(String),
      org_id: t.org_id,
      env_id: t.env_id,
      data: {
        domain_id: d.domain_id,
        domain_name: 'verify.example.com',
        verification_status: 'verified',
        spf_status: 'verified',
        dkim_status: 'verified',
        dmarc_status: 'failed',
        verified_at: done.body.verified_at,
      },
    });

    // A second verify changes nothing and announces nothing: the next event on the stream is another domain's.
    const again = await verify(t, d.domain_id);
    expect(again.body).toMatchObject({ verification_status: 'verified', verified_at: done.body.verified_at });
    const other = await add(t, 'second.example.com');
    serve(other.records);
    expect((await verify(t, other.domain_id)).body.verification_status).toBe('verified');
    await events.waitFor((e) => e.type === 'domain.verified' && e.data.domain_id === other.domain_id);
    expect(events.events.filter((e) => e.type === 'domain.verified' && e.data.domain_id === d.domain_id)).toHaveLength(1);
    await waitFor(() => deliveriesOf(other.domain_id).length === 1, { what: 'the second domain announced' });
    expect(deliveriesOf(d.domain_id)).toHaveLength(1);
  });

  it('marks a verified domain whose records break as failed, with the reason; a DNS timeout is temporary_failure and fails nothing', async () => {
    const t = await signUp();
    const d = await add(t, 'breaks.example.com');
    serve(d.records);
    expect((await verify(t, d.domain_id)).body.verification_status).toBe('verified');
    const dkimName = kind(d, 'dkim').name;

    faults.push({ name: dkimName, delayMs: DNS_TIMEOUT_MS * 8 });
    try {
      const slow = await verify(t, d.domain_id);
      expect(slow.status).toBe(200);
      expect(slow.body).toMatchObject({ verification_status: 'verified', dkim_status: 'temporary_failure', spf_status: 'verified' });
      expect(kind(slow.body, 'dkim')).toMatchObject({ status: 'temporary_failure', reason: 'temporary_failure' });
    } finally {
      faults.length = 0;
    }

    // The DKIM record replaced by another key: a mismatch showing what is there.
    dns.set([]);
    serve(d.records, { dkim: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqOTHER' });
    const broke = await verify(t, d.domain_id);
    expect(broke.body).toMatchObject({ verification_status: 'failed', dkim_status: 'failed' });
    expect(kind(broke.body, 'dkim')).toMatchObject({ reason: 'mismatch', found: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqOTHER'] });
    expect(broke.body.failure_reason).toMatch(/DKIM record does not match/);

    dns.set([]);
    serve(d.records);
    expect((await verify(t, d.domain_id)).body).toMatchObject({ verification_status: 'verified', failure_reason: null });
    // domain.verified was emitted for the first verification only.
    const other = await add(t, 'after.example.com');
    serve(other.records);
    await verify(t, other.domain_id);
    await events.waitFor((e) => e.type === 'domain.verified' && e.data.domain_id === other.domain_id);
    expect(events.events.filter((e) => e.type === 'domain.verified' && e.data.domain_id === d.domain_id)).toHaveLength(1);
  });

  it('is done by the job for a pending domain without a call, and a verified name is not another organization\'s', async () => {
    const t = await signUp();
    const d = await add(t, 'job.example.com');
    serve(d.records);
    await waitFor(async () => (await api.get(`/api/v1/domains/${d.domain_id}`, { token: t.key })).body.verification_status === 'verified', { what: 'the job to verify the domain' });
    await events.waitFor((e) => e.type === 'domain.verified' && e.data.domain_id === d.domain_id);

    const rival = await signUp();
    const taken = await api.post('/api/v1/domains', { domain_name: 'job.example.com' }, { token: rival.key });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'conflict']);
    expect(taken.body.error.message).toMatch(/another organization/);
    // Another organization's domain is not found here, whatever the route.
    for (const res of [
      await api.get(`/api/v1/domains/${d.domain_id}`, { token: rival.key }),
      await verify(rival, d.domain_id),
      await api.get(`/api/v1/domains/${d.domain_id}/zone-file`, { token: rival.key }),
      await api.delete(`/api/v1/domains/${d.domain_id}`, { token: rival.key }),
    ]) {
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    expect((await api.get(`/api/v1/domains/${newId('domain')}`, { token: t.key })).status).toBe(404);
  });
});

describe('listing and deleting', () => {
  it('lists the environment\'s domains newest first, paged', async () => {
    const t = await signUp();
    const names = ['one.example.com', 'two.example.com', 'three.example.com'];
    for (const n of names) await add(t, n);
    const first = await api.get('/api/v1/domains?limit=2', { token: t.key });
    expect(first.body.data.map((x: { domain_name: string }) => x.domain_name)).toEqual(['three.example.com', 'two.example.com']);
    const second = await api.get(`/api/v1/domains?limit=2&page_token=${first.body.next_page_token}`, { token: t.key });
    expect([second.body.data.map((x: { domain_name: string }) => x.domain_name), second.body.next_page_token]).toEqual([['one.example.com'], null]);
    expect((await api.get('/api/v1/domains?limit=101', { token: t.key })).status).toBe(400);
  });

  it('refuses to delete a domain inboxes use, naming them; deletes it once they are gone', async () => {
    const t = await signUp();
    const d = await add(t, 'used.example.com');
    // Inboxes on custom domains come with a later part of issue 25: written here as mailbox will write them.
    const inboxId = newId('inbox');
    await sql`insert into mailbox.inboxes (id, org_id, env_id, username, domain, address, display_name, status, created_at, updated_at)
      values (${inboxId}, ${t.org_id}, ${t.env_id}, 'support', 'used.example.com', 'support@used.example.com', null, 'active', now(), now())`.execute(db);
    const refused = await api.delete(`/api/v1/domains/${d.domain_id}`, { token: t.key });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'conflict']);
    expect(refused.body.error.message).toMatch(/support@used\.example\.com/);
    expect(await api.delete(`/api/v1/inboxes/${inboxId}`, { token: t.key })).toMatchObject({ status: 204 });
    expect((await api.delete(`/api/v1/domains/${d.domain_id}`, { token: t.key })).status).toBe(204);
    expect((await api.get(`/api/v1/domains/${d.domain_id}`, { token: t.key })).status).toBe(404);
    expect((await api.delete(`/api/v1/domains/${d.domain_id}`, { token: t.key })).status).toBe(404);
    expect((await api.get('/api/v1/org/usage', { token: t.key })).body.usage.domains.used).toBe(0);
  });

  it('keeps an environment that holds domains from being deleted, naming them', async () => {
    const t = await signUp();
    const created = await api.post('/api/v1/environments', { name: 'staging' }, { token: t.accessToken });
    expect(created.status).toBe(201);
    const inEnv = { token: t.accessToken, headers: { 'x-env-id': created.body.id } };
    const d = await api.post('/api/v1/domains', { domain_name: 'staging.example.com' }, inEnv);
    expect(d.status).toBe(201);
    const refused = await api.delete(`/api/v1/environments/${created.body.id}`, { token: t.accessToken });
    expect([refused.status, refused.body.error.message]).toEqual([409, expect.stringMatching(/1 domain\(s\)/)]);
    expect((await api.delete(`/api/v1/domains/${d.body.domain_id}`, inEnv)).status).toBe(204);
    expect((await api.delete(`/api/v1/environments/${created.body.id}`, { token: t.accessToken })).status).toBe(204);
  });
});

describe('the zone file', () => {
  const checkzone = (() => {
    try {
      return execFileSync('sh', ['-c', 'command -v named-checkzone'], { encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  })();

  it('is text/plain with every record, fully qualified', async () => {
    const t = await signUp();
    const d = await add(t, 'zone.example.com');
    const res = await api.get(`/api/v1/domains/${d.domain_id}/zone-file`, { token: t.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toContain('zone.example.com.\t3600\tIN\tMX\t10 mx.mailroom.test.');
    expect(res.text).toContain(`${kind(d, 'dkim').name}.\t3600\tIN\tTXT\t"v=DKIM1; k=rsa; p=`);
    expect(res.text).toContain('bounces.zone.example.com.\t3600\tIN\tCNAME\tbounces.mailroom.test.');
  });

  (checkzone ? it : it.skip)('passes BIND\'s named-checkzone (Debian bind9-utils)', async () => {
    const t = await signUp();
    const d = await add(t, 'bind.example.com');
    const res = await api.get(`/api/v1/domains/${d.domain_id}/zone-file`, { token: t.key });
    const dir = mkdtempSync(join(tmpdir(), 'zone-'));
    try {
      // The fragment goes into a zone of the customer's, which has its own SOA and NS.
      const zone = ['$TTL 3600', 'bind.example.com. IN SOA ns1.example.net. hostmaster.example.net. 1 7200 3600 1209600 3600', 'bind.example.com. IN NS ns1.example.net.', res.text].join('\n');
      writeFileSync(join(dir, 'zone'), zone);
      const out = execFileSync(checkzone!, ['-i', 'local', 'bind.example.com', join(dir, 'zone')], { encoding: 'utf8' });
      expect(out).toMatch(/loaded serial 1\s+OK/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  if (!checkzone) it('cannot run named-checkzone: install Debian\'s bind9-utils to check the zone file with BIND', () => undefined);
});
