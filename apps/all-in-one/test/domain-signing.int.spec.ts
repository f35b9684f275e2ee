/**
 * Sending with a custom domain's own DKIM key (issue 25, part 7), through HTTP and a real SMTP
 * relay: a domain added through the API, its records served by the DNS server on loopback and
 * verified, an inbox on it; mail from it signed d=<the domain> with its key, which mailauth (an
 * independent verifier) checks against the record served by the same DNS server; its envelope
 * sender on the domain's bounce name, where the relay's bounce report comes back through the
 * SMTP edge; a From on a domain that no longer verifies refused before anything is stored
 * (HTTP 422 account_paused and message.rejected); rotation: the old key signs until the new
 * record verifies, then the new one.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { freePort, startTestRelay, waitFor, type DnsRecord, type TestRelay, publishedRecord } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const MAIL_DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;

const platformKey = generateKeyPairSync('rsa', { modulusLength: 2048 });

// The relay sends its reports to the SMTP edge: its port is chosen first.
beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: (rcpt) => (rcpt.startsWith('gone@') ? 'bounce' : 'deliver') });
});

const { api, events: tap, dns, signUp } = usePlatform({
  env: () => ({
    MAIL_DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    DKIM_PRIVATE_KEY: platformKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DKIM_SELECTOR: 'mailroom',
    BOUNCE_DOMAIN: `bounces.${MAIL_DOMAIN}`,
    DOMAIN_SPF_INCLUDE: `spf.${MAIL_DOMAIN}`,
    DNS_TIMEOUT_MS: '1000',
    // Checks are asked for here (verify); the job would check at its own time.
    DOMAIN_CHECK_INTERVAL_MS: '3600000',
  }),
  dns: [],
  events: true,
});

// Once the platform has stopped.
afterAll(async () => {
  await relay?.close();
});

interface Rec {
  kind: string;
  type: 'MX' | 'TXT' | 'CNAME';
  name: string;
  value: string;
  priority: number | null;
  status: string;
}
interface DomainBody {
  domain_id: string;
  domain_name: string;
  verification_status: string;
  records: Rec[];
}

const record = (d: { records: Rec[] }, kind: string) => d.records.find((r) => r.kind === kind);
const selectorOf = (r: Rec) => r.name.split('._domainkey.')[0]!;

async function addDomain(name: string): Promise<DomainBody> {
  const res = await api.post('/api/v1/domains', { domain_name: name });
  expect(res.status).toBe(201);
  return res.body;
}
async function verify(id: string): Promise<DomainBody> {
  const res = await api.post(`/api/v1/domains/${id}/verify`);
  expect(res.status).toBe(200);
  return res.body;
}
/** What the DNS server serves, kept here so a record can be taken away again. */
const zone: DnsRecord[] = [];
function serve(...records: DnsRecord[]): void {
  zone.push(...records);
  dns.set(zone);
}
function unserve(name: string): void {
  zone.splice(0, zone.length, ...zone.filter((r) => r.name !== name));
  dns.set(zone);
}

/** A domain with every record served and checked: verified. */
async function verifiedDomain(name: string): Promise<DomainBody> {
  const d = await addDomain(name);
  serve(...d.records.map((x) => publishedRecord(x)));
  const checked = await verify(d.domain_id);
  expect(checked).toMatchObject({ verification_status: 'verified', bounce_status: 'verified' });
  return checked;
}
async function inboxOn(domain: string, username = 'support'): Promise<{ inbox_id: string; address: string }> {
  const res = await api.post('/api/v1/inboxes', { username, domain });
  expect(res.status).toBe(201);
  return res.body;
}

const send = (inboxId: string, subject: string, to = 'ada@sender.test') => api.post(`/api/v1/inboxes/${inboxId}/messages/send`, { to: [to], subject, text_body: 'Hello from our own domain.' });
const relayed = (subject: string) => waitFor(() => relay.received.find((m) => m.raw.toString('latin1').includes(`\r\nSubject: ${subject}\r\n`)), { timeoutMs: 20_000, what: `"${subject}" at the relay` });

/** mailauth's verdict on a relayed message, its keys looked up in the DNS server the domains' records are served by. */
async function dkimOf(raw: Buffer): Promise<[string, string, string][]> {
  const resolver = new Resolver();
  resolver.setServers([dns.servers]);
  const verdict = await dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
  return verdict.results.map((r) => [r.signingDomain ?? '', (r as { selector?: string }).selector ?? '', r.status.result]);
}

describe('mail from a verified custom domain', () => {
  it('is signed d=<the domain> with its own key and selector, verified against the record served, and returns to bounces.<the domain>', async () => {
    const d = await verifiedDomain('signing.example.com');
    const inbox = await inboxOn(d.domain_name);
    const res = await send(inbox.inbox_id, 'Signed by our domain');
    expect(res.status).toBe(200);
    const sent = await relayed('Signed by our domain');
    expect(sent.raw.toString('latin1')).toMatch(/^From: support@signing\.example\.com\r$/m);
    expect(await dkimOf(sent.raw)).toEqual([['signing.example.com', selectorOf(record(d, 'dkim')!), 'pass']]);
    expect(sent.mailFrom).toMatch(new RegExp(`^bounces\\+${res.body.message_id}-[0-9a-z]{10}@bounces\\.signing\\.example\\.com$`));
    const event = await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === res.body.message_id);
    expect(event.data).toMatchObject({ inbox_id: inbox.inbox_id, from_address: inbox.address });

    // The relay's bounce report goes to that address; the SMTP edge takes it for the domain's bounce name, mail-send reads it by its MAC.
    const bounced = await send(inbox.inbox_id, 'To someone gone', 'gone@sender.test');
    expect(bounced.status).toBe(200);
    expect((await relayed('To someone gone')).mailFrom).toMatch(/@bounces\.signing\.example\.com$/);
    const report = await tap.waitFor((e) => e.type === 'message.bounced' && e.data.message_id === bounced.body.message_id, 20_000);
    expect(report.data).toMatchObject({ inbox_id: inbox.inbox_id, bounce_type: 'Permanent', bounced_recipients: [expect.objectContaining({ email_address: 'gone@sender.test' })] });
  });

  it('returns to the platform bounce domain while the bounce name does not verify; MAIL_DOMAIN\'s mail keeps the platform key', async () => {
    const d = await addDomain('nobounce.example.com');
    serve(...d.records.filter((x) => x.kind !== 'bounce').map((x) => publishedRecord(x)));
    expect(await verify(d.domain_id)).toMatchObject({ verification_status: 'verified', bounce_status: 'failed' });
    const inbox = await inboxOn(d.domain_name);
    const res = await send(inbox.inbox_id, 'No bounce name yet');
    expect(res.status).toBe(200);
    const sent = await relayed('No bounce name yet');
    expect(sent.mailFrom).toMatch(new RegExp(`^bounces\\+${res.body.message_id}-[0-9a-z]{10}@bounces\\.agents\\.test$`));
    expect(await dkimOf(sent.raw)).toEqual([['nobounce.example.com', selectorOf(record(d, 'dkim')!), 'pass']]);

    serve({ type: 'TXT', name: `mailroom._domainkey.${MAIL_DOMAIN}`, text: `v=DKIM1; k=rsa; p=${platformKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}` });
    const own = (await api.post('/api/v1/inboxes', { username: 'platform' })).body;
    expect((await send(own.inbox_id, 'From the platform domain')).status).toBe(200);
    const platformMail = await relayed('From the platform domain');
    expect(await dkimOf(platformMail.raw)).toEqual([[MAIL_DOMAIN, 'mailroom', 'pass']]);
    expect(platformMail.mailFrom).toMatch(/@bounces\.agents\.test$/);
  });
});

describe('a From on a domain that does not verify', () => {
  it('is refused before anything is stored: 422 account_paused naming the domain and why, and message.rejected; sends again once it verifies', async () => {
    const d = await verifiedDomain('broken.example.com');
    const inbox = await inboxOn(d.domain_name);
    const dkim = record(d, 'dkim')!;
    // Its DKIM record replaced by another key: the domain fails.
    unserve(dkim.name);
    serve({ type: 'TXT', name: dkim.name, text: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqOTHER' });
    expect(await verify(d.domain_id)).toMatchObject({ verification_status: 'failed' });
    // Nothing was sent from it before: mail-send asks domains now.
    const refused = await send(inbox.inbox_id, 'While broken');
    expect([refused.status, refused.body.error.code]).toEqual([422, 'account_paused']);
    const detail = 'the domain broken.example.com is no longer verified (DKIM record does not match (found "v=DKIM1; k=rsa; p=MIIBIjANBgkqOTHER")); sending from it resumes once it verifies again';
    expect(refused.body.error.message).toBe(detail);
    const rejected = await tap.waitFor((e) => e.type === 'message.rejected' && e.data.inbox_id === inbox.inbox_id && e.data.subject === 'While broken');
    expect(rejected.data).toEqual({
      inbox_id: inbox.inbox_id,
      from_address: 'support@broken.example.com',
      to_addresses: ['ada@sender.test'],
      subject: 'While broken',
      rejection_reason: 'account_paused',
      rejection_detail: detail,
      rejected_at: expect.any(String),
    });
    expect((await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data.map((m: { subject: string }) => m.subject)).not.toContain('While broken');

    // Fixed and verified: the fact drops what mail-send kept of the domain, and the send goes.
    unserve(dkim.name);
    serve(publishedRecord(dkim));
    expect(await verify(d.domain_id)).toMatchObject({ verification_status: 'verified' });
    const sent = await waitFor(async () => {
      const res = await send(inbox.inbox_id, 'Verified again');
      return res.status === 200 && res;
    }, { timeoutMs: 10_000, intervalMs: 200, what: 'a send accepted once the domain verified again' });
    const mail = await relayed('Verified again');
    expect(await dkimOf(mail.raw)).toEqual([['broken.example.com', selectorOf(dkim), 'pass']]);
    await tap.waitFor((e) => e.type === 'message.sent' && e.data.message_id === sent.body.message_id);
  });
});

describe('rotating a domain\'s DKIM key', () => {
  it('keeps the old key signing until the new record verifies, then signs with the new one; one rotation at a time', async () => {
    const d = await verifiedDomain('rotate.example.com');
    const oldSelector = selectorOf(record(d, 'dkim')!);
    const inbox = await inboxOn(d.domain_name);

    const rotated = await api.post(`/api/v1/domains/${d.domain_id}/dkim/rotate`);
    expect(rotated.status).toBe(200);
    const next = record(rotated.body, 'dkim_next')!;
    expect(next).toMatchObject({ type: 'TXT', status: 'pending', purpose: 'signing', value: expect.stringMatching(/^v=DKIM1; k=rsa; p=/) });
    const newSelector = selectorOf(next);
    expect(newSelector).toMatch(/^mr[0-9a-z]{8}$/);
    expect(newSelector).not.toBe(oldSelector);
    expect(record(rotated.body, 'dkim')).toMatchObject({ name: `${oldSelector}._domainkey.rotate.example.com`, status: 'verified' });
    expect(rotated.body.verification_status).toBe('verified');
    const zone = await api.get(`/api/v1/domains/${d.domain_id}/zone-file`);
    expect(zone.text).toContain(`${newSelector}._domainkey.rotate.example.com.`);
    const again = await api.post(`/api/v1/domains/${d.domain_id}/dkim/rotate`);
    expect([again.status, again.body.error.code, again.body.error.message]).toEqual([409, 'conflict', expect.stringContaining(`${newSelector}._domainkey.rotate.example.com`)]);

    // Not published yet: the old key signs, and a check says the new record is missing.
    expect((await send(inbox.inbox_id, 'Before the new record')).status).toBe(200);
    expect(await dkimOf((await relayed('Before the new record')).raw)).toEqual([['rotate.example.com', oldSelector, 'pass']]);
    const missing = await verify(d.domain_id);
    expect(record(missing, 'dkim_next')).toMatchObject({ status: 'failed', reason: 'missing' });
    expect((await send(inbox.inbox_id, 'Still the old key')).status).toBe(200);
    expect(await dkimOf((await relayed('Still the old key')).raw)).toEqual([['rotate.example.com', oldSelector, 'pass']]);

    // Published and verified: the new key is the domain's key.
    serve(publishedRecord(next));
    const promoted = await verify(d.domain_id);
    expect(promoted).toMatchObject({ verification_status: 'verified', dkim_status: 'verified' });
    expect(record(promoted, 'dkim')).toMatchObject({ name: next.name, value: next.value, status: 'verified' });
    expect(record(promoted, 'dkim_next')).toBeUndefined();
    // Sends made until mail-send has read the fact may still carry the old key (valid: its record is still there); then the new one, for good.
    const selectors: string[] = [];
    await waitFor(async () => {
      const subject = `After the rotation ${selectors.length}`;
      expect((await send(inbox.inbox_id, subject)).status).toBe(200);
      const [[domain, selector, result]] = await dkimOf((await relayed(subject)).raw) as [[string, string, string]];
      expect([domain, result]).toEqual(['rotate.example.com', 'pass']);
      selectors.push(selector);
      return selector === newSelector;
    }, { timeoutMs: 20_000, intervalMs: 100, what: 'a message signed with the new key' });
    expect(selectors.slice(0, -1).every((s) => s === oldSelector)).toBe(true);
    expect((await send(inbox.inbox_id, 'Long after the rotation')).status).toBe(200);
    expect(await dkimOf((await relayed('Long after the rotation')).raw)).toEqual([['rotate.example.com', newSelector, 'pass']]);
    // Another rotation may start now.
    expect((await api.post(`/api/v1/domains/${d.domain_id}/dkim/rotate`)).status).toBe(200);
  });

  it('answers 404 for a domain of another tenant or none, and rotates nothing then', async () => {
    const other = await signUp();
    const theirs = (await other.api.post('/api/v1/domains', { domain_name: 'theirs.example.com' })).body as DomainBody;
    expect((await api.post(`/api/v1/domains/${theirs.domain_id}/dkim/rotate`)).status).toBe(404);
    expect(record((await other.api.get(`/api/v1/domains/${theirs.domain_id}`)).body, 'dkim_next')).toBeUndefined();
    expect((await api.post(`/api/v1/domains/dom_${'0'.repeat(26)}/dkim/rotate`)).status).toBe(404);
    expect((await api.post('/api/v1/domains/not-an-id/dkim/rotate')).status).toBe(400);
  });
});
