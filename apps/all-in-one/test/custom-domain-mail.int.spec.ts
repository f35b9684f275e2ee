/**
 * Mail on custom domains through HTTP and SMTP (issue 25, parts 5-6): inboxes on a domain once
 * it is verified (422 before), mail to them over SMTP, a domain the edge learns it serves
 * without a restart, the catch-all (set, refused when wrong, one per name, cleared), and
 * refusals at RCPT for domains it does not serve.
 */
import nodemailer from 'nodemailer';
import { waitFor, type Tenant, publishedRecord } from '@mailroom/testing';
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
const { anon: api, dns, signUp } = platform;

interface Rec {
  kind: string;
  type: 'MX' | 'TXT' | 'CNAME';
  name: string;
  value: string;
  priority: number | null;
}
interface Domain {
  domain_id: string;
  domain_name: string;
  verification_status: string;
  records: Rec[];
  catch_all_inbox_id: string | null;
}


const opts = (t: Tenant, envId?: string) => ({ token: envId ? t.accessToken : t.key, ...(envId ? { headers: { 'x-env-id': envId } } : {}) });

async function addDomain(t: Tenant, name: string, envId?: string): Promise<Domain> {
  const res = await api.post('/api/v1/domains', { domain_name: name }, opts(t, envId));
  expect(res.status).toBe(201);
  return res.body as Domain;
}

const published = new Set<string>();

/** Its records served by the loopback DNS server, then checked: verified. */
async function verified(t: Tenant, d: Domain, envId?: string): Promise<Domain> {
  for (const r of d.records) {
    // Two environments' domains of one name share all records but DKIM's; an SPF record served twice would be two.
    const key = `${r.type} ${r.name} ${r.value}`;
    if (!published.has(key)) dns.add(publishedRecord(r));
    published.add(key);
  }
  const res = await api.post(`/api/v1/domains/${d.domain_id}/verify`, undefined, opts(t, envId));
  expect(res.body.verification_status).toBe('verified');
  return res.body as Domain;
}

async function inbox(t: Tenant, username: string, domain?: string, envId?: string) {
  const res = await api.post('/api/v1/inboxes', { username, ...(domain ? { domain } : {}) }, opts(t, envId));
  expect(res.status).toBe(201);
  return res.body as { inbox_id: string; address: string };
}

/** One message over SMTP: accepted, or the code and text of the refusal. */
async function smtp(to: string, subject: string): Promise<{ accepted: true } | { accepted: false; code: number; response: string }> {
  try {
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: platform.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' })
      .sendMail({ from: 'someone@sender.test', to, subject, text: 'Hello there.' });
    return { accepted: true };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string };
    return { accepted: false, code: e.responseCode ?? 0, response: e.response ?? String(err) };
  }
}

async function messagesOf(t: Tenant, inboxId: string): Promise<{ subject: string; to_addresses?: string[] }[]> {
  return (await api.get(`/api/v1/inboxes/${inboxId}/messages`, { token: t.key })).body.data;
}

const arrives = (t: Tenant, inboxId: string, subject: string) =>
  waitFor(async () => (await messagesOf(t, inboxId)).find((m) => m.subject === subject), { timeoutMs: 20_000, what: `"${subject}" in ${inboxId}` });

/** Sends until the edge takes it: it learns of a change through a fact, within moments. */
const acceptedOnceLearned = (to: string, subject: string) => waitFor(async () => (await smtp(to, subject)).accepted, { timeoutMs: 10_000, what: `the edge to take mail for ${to}` });

describe('inboxes on a custom domain', () => {
  it('are refused until the domain verifies, then created and receive mail over SMTP', async () => {
    const t = await signUp();
    const d = await addDomain(t, 'inbox-first.example.org');

    const early = await api.post('/api/v1/inboxes', { username: 'support', domain: 'inbox-first.example.org' }, { token: t.key });
    expect(early.status).toBe(422);
    expect(early.body.error).toMatchObject({ code: 'unprocessable', message: expect.stringContaining('inbox-first.example.org is pending') });
    // The edge does not take mail for a domain it does not serve.
    expect(await smtp('support@inbox-first.example.org', 'too early')).toMatchObject({ accepted: false, code: 550, response: expect.stringContaining('5.7.1') });

    await verified(t, d);
    const support = await inbox(t, 'support', 'Inbox-First.Example.ORG');
    expect(support.address).toBe('support@inbox-first.example.org');

    // Learned from the domain's fact: no restart, and the refusal above is not kept.
    await acceptedOnceLearned('support@inbox-first.example.org', 'hello support');
    await arrives(t, support.inbox_id, 'hello support');
    // Without a catch-all, an unknown address of a served domain is refused at RCPT.
    expect(await smtp('nobody@inbox-first.example.org', 'unknown')).toMatchObject({ accepted: false, code: 550, response: expect.stringContaining('5.1.1') });
  });

  it("are refused on a domain the environment does not have, another organization's included", async () => {
    const owner = await signUp();
    await verified(owner, await addDomain(owner, 'theirs.example.org'));
    const other = await signUp();
    const res = await api.post('/api/v1/inboxes', { username: 'support', domain: 'theirs.example.org' }, { token: other.key });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('not a domain of this environment');
    const bad = await api.post('/api/v1/inboxes', { username: 'support', domain: 'not a domain' }, { token: other.key });
    expect(bad.status).toBe(400);
  });
});

describe('the catch-all', () => {
  it('sends mail for unknown addresses to its inbox once set, and refuses it again once cleared', async () => {
    const t = await signUp();
    const d = await verified(t, await addDomain(t, 'catch.example.org'));
    const all = await inbox(t, 'everything', 'catch.example.org');
    const named = await inbox(t, 'named', 'catch.example.org');
    await acceptedOnceLearned('named@catch.example.org', 'warm-up');
    expect(await smtp('anything@catch.example.org', 'before')).toMatchObject({ accepted: false, code: 550 });

    const set = await api.patch(`/api/v1/domains/${d.domain_id}/catch-all`, { inbox_id: all.inbox_id }, { token: t.key });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ domain_id: d.domain_id, catch_all_inbox_id: all.inbox_id });
    expect((await api.get(`/api/v1/domains/${d.domain_id}`, { token: t.key })).body.catch_all_inbox_id).toBe(all.inbox_id);

    await acceptedOnceLearned('anything@catch.example.org', 'for anyone');
    await arrives(t, all.inbox_id, 'for anyone');
    // A known address still goes to its own inbox.
    expect(await smtp('named@catch.example.org', 'for named')).toEqual({ accepted: true });
    await arrives(t, named.inbox_id, 'for named');
    expect((await messagesOf(t, all.inbox_id)).map((m) => m.subject)).not.toContain('for named');

    const cleared = await api.patch(`/api/v1/domains/${d.domain_id}/catch-all`, { inbox_id: null }, { token: t.key });
    expect(cleared.status).toBe(200);
    expect(cleared.body.catch_all_inbox_id).toBeNull();
    await waitFor(async () => {
      const r = await smtp('anything@catch.example.org', 'after');
      return !r.accepted && r.code === 550;
    }, { timeoutMs: 10_000, what: 'the edge to refuse unknown addresses again' });
  });

  it('takes only an inbox on the domain, in the environment, and answers bad requests in the error shape', async () => {
    const t = await signUp();
    const d = await verified(t, await addDomain(t, 'strict.example.org'));
    const own = await inbox(t, 'own');
    const other = await signUp();
    const theirs = await inbox(other, 'theirs');
    const path = `/api/v1/domains/${d.domain_id}/catch-all`;

    const wrongDomain = await api.patch(path, { inbox_id: own.inbox_id }, { token: t.key });
    expect(wrongDomain.status).toBe(422);
    expect(wrongDomain.body.error.message).toContain('is not on strict.example.org');
    expect((await api.patch(path, { inbox_id: theirs.inbox_id }, { token: t.key })).status).toBe(404);
    expect((await api.patch(path, { inbox_id: 'inb_01jzzzzzzzzzzzzzzzzzzzzzzz' }, { token: t.key })).status).toBe(404);
    expect((await api.patch(path, { inbox_id: 'nope' }, { token: t.key })).status).toBe(400);
    expect((await api.patch(path, {}, { token: t.key })).status).toBe(400);
    expect((await api.patch(path, { inbox_id: null, extra: 1 }, { token: t.key })).status).toBe(400);
    // Another organization's domain is not found, whatever the body.
    expect((await api.patch(path, { inbox_id: null }, { token: other.key })).status).toBe(404);
    expect((await api.get(`/api/v1/domains/${d.domain_id}`, { token: t.key })).body.catch_all_inbox_id).toBeNull();
  });

  it('is one per name: another environment holding one for the same name is a 409', async () => {
    const t = await signUp();
    const staging = (await api.post('/api/v1/environments', { name: 'staging' }, { token: t.accessToken })).body.id as string;
    const here = await verified(t, await addDomain(t, 'twice.example.org'));
    const there = await verified(t, await addDomain(t, 'twice.example.org', staging), staging);
    const hereInbox = await inbox(t, 'here', 'twice.example.org');
    const thereInbox = await inbox(t, 'there', 'twice.example.org', staging);

    expect((await api.patch(`/api/v1/domains/${here.domain_id}/catch-all`, { inbox_id: hereInbox.inbox_id }, { token: t.key })).status).toBe(200);
    const conflict = await api.patch(`/api/v1/domains/${there.domain_id}/catch-all`, { inbox_id: thereInbox.inbox_id }, opts(t, staging));
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.message).toContain('one catch-all per name');
    // Clearing needs no check, and frees the name.
    expect((await api.patch(`/api/v1/domains/${here.domain_id}/catch-all`, { inbox_id: null }, { token: t.key })).status).toBe(200);
    expect((await api.patch(`/api/v1/domains/${there.domain_id}/catch-all`, { inbox_id: thereInbox.inbox_id }, opts(t, staging))).status).toBe(200);
  });
});

describe('the SMTP edge', () => {
  it('refuses mail for a domain nobody verified, and for one that was deleted', async () => {
    expect(await smtp('someone@nobody-has.example.org', 'nope')).toMatchObject({ accepted: false, code: 550, response: expect.stringContaining('5.7.1') });
    const t = await signUp();
    const d = await verified(t, await addDomain(t, 'short-lived.example.org'));
    const box = await inbox(t, 'box', 'short-lived.example.org');
    await acceptedOnceLearned('box@short-lived.example.org', 'while it lasts');
    expect((await api.delete(`/api/v1/inboxes/${box.inbox_id}`, { token: t.key })).status).toBe(204);
    expect((await api.delete(`/api/v1/domains/${d.domain_id}`, { token: t.key })).status).toBe(204);
    await waitFor(async () => {
      const r = await smtp('box@short-lived.example.org', 'gone');
      return !r.accepted && r.response.includes('5.7.1');
    }, { timeoutMs: 10_000, what: 'the edge to refuse the deleted domain' });
  });
});
