/**
 * Organization exports as an operator runs them (issue 28, parts 4 and 6): an organization
 * with mail received over SMTP (small and large, with attachments) and sent through a real
 * relay (with attachments) is exported; the archive, downloaded through the gateway and
 * unpacked, holds every message's raw bytes exactly as the raw route gives them, every
 * attachment as its route gives it, and NDJSON of every resource without secrets. A second
 * export while one runs is a 409 naming it; a missing organization 404; tenant credentials
 * are refused; an expired export's archive is deleted by the purge (410).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import yauzl from 'yauzl';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { freePort, startTestRelay, waitFor, type TestRelay } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'services', 'admin', 'dist', 'cli.js');
const DOMAIN = 'agents.test';
let relay: TestRelay;
let smtpPort: number;
let admin: string;
let db: Kysely<unknown>;

beforeAll(async () => {
  smtpPort = await freePort();
  relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: smtpPort }, hostname: 'relay.test', behaviour: () => 'deliver' });
});
const { api, anon, tenant, env } = usePlatform({
  env: () => ({
    MAIL_DOMAIN: DOMAIN,
    SMTP_PORT: String(smtpPort),
    RSPAMD_URL: 'off',
    SMTP_RELAY_URL: relay.url,
    EXPORT_SWEEP_INTERVAL_SECONDS: '1',
    RATE_LIMIT_PER_SECOND: '10000',
    RATE_LIMIT_BURST: '10000',
  }),
  dns: [{ name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' }],
});
beforeAll(async () => {
  const { stdout } = await run(process.execPath, [CLI, 'create-key', '--name', 'exports'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  admin = stdout.trim();
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 2 });
});
afterAll(async () => {
  await db?.destroy();
  await relay?.close();
});

/** The bytes of a route, read with the tenant's key or the admin key. */
async function bytesOf(path: string, token: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(`${api.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

/** Every entry of a zip archive, by name. */
function unzip(archive: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(archive, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no archive'));
      const out = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

function ndjson(entries: Map<string, Buffer>, path: string): Record<string, unknown>[] {
  const text = entries.get(path)?.toString('utf8');
  if (text === undefined) throw new Error(`${path} is not in the archive`);
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const waitForExport = (id: string, status: string) =>
  waitFor(async () => {
    const res = await api.get(`/api/v1/admin/exports/${id}`, { token: admin });
    return res.body.status === status && res.body;
  }, { timeoutMs: 60_000, what: `export ${id} ${status}` });

describe('organization exports', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(4000, 7)]);
  const big = Buffer.alloc(300 * 1024, 'z'); // past the inline limit: its raw message is in mail-ingest's bucket

  it('export every message byte for byte, every attachment and every resource, through a streamed download', async () => {
    const inbox = (await api.post('/api/v1/inboxes', { username: 'support' })).body;
    const hook = await api.post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/mailroom', events: ['domain.verified'] });
    expect(hook.status).toBe(201);
    const domain = await api.post('/api/v1/domains', { domain_name: 'exported.example.com' });
    expect(domain.status).toBe(201);
    const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
    await smtp.sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Small', text: 'hello' });
    await smtp.sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'With files', text: 'see attached', attachments: [{ filename: 'report.pdf', content: pdf, contentType: 'application/pdf' }, { filename: 'big.bin', content: big }] });
    const sent = await api.post(`/api/v1/inboxes/${inbox.inbox_id}/messages/send`, {
      to: 'pat@sender.test',
      subject: 'Outbound',
      text_body: 'Attached.',
      attachments: [{ filename: 'notes.txt', content_base64: Buffer.from('notes').toString('base64') }],
    });
    expect(sent.status).toBe(200);
    // The sent message is stored (composed and signed) once the relay has it.
    await waitFor(() => relay.received.some((m) => m.raw.includes('Subject: Outbound')), { timeoutMs: 20_000, what: 'the sent message at the relay' });
    const messages = await waitFor(async () => {
      const list = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages?limit=100`)).body.data as { message_id: string; subject: string; has_attachments: boolean }[];
      return list.length === 3 && list;
    }, { timeoutMs: 20_000, what: 'three messages' });

    const started = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ id: expect.stringMatching(/^exp_/), org_id: tenant.org_id, status: expect.stringMatching(/^(queued|running|completed)$/), download_url: null });
    const done = await waitForExport(started.body.id, 'completed');
    expect(done).toMatchObject({ size_bytes: expect.any(Number), download_url: `/api/v1/admin/exports/${started.body.id}/download`, error: null, expires_at: expect.any(String) });
    expect(done.progress).toMatchObject({ resources_done: done.progress.resources_total, current_resource: null, files: 6, bytes: done.size_bytes });
    expect(new Date(done.expires_at).getTime() - new Date(done.finished_at).getTime()).toBe(7 * 86_400_000);

    const download = await bytesOf(done.download_url, admin);
    expect(download.status).toBe(200);
    expect(download.type).toBe('application/zip');
    expect(download.body.length).toBe(done.size_bytes);
    const entries = await unzip(download.body);

    // Every message, byte for byte as the raw route gives it; every attachment as its route gives it.
    for (const m of messages) {
      const raw = await bytesOf(`/api/v1/inboxes/${inbox.inbox_id}/messages/${m.message_id}/raw`, tenant.key);
      expect(raw.status).toBe(200);
      expect(entries.get(`messages/${inbox.inbox_id}/${m.message_id}.eml`)?.equals(raw.body)).toBe(true);
      const full = (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages/${m.message_id}`)).body;
      for (const a of full.attachments as { attachment_id: string }[]) {
        const file = await bytesOf(`/api/v1/inboxes/${inbox.inbox_id}/messages/${m.message_id}/attachments/${a.attachment_id}`, tenant.key);
        expect(entries.get(`attachments/${m.message_id}/${a.attachment_id}.bin`)?.equals(file.body)).toBe(true);
      }
    }

    // NDJSON of every resource, the organization's rows only, secrets left out.
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    expect(manifest).toMatchObject({ format: 'mailroom-org-export', version: 1, export_id: started.body.id, org_id: tenant.org_id, files: 6, missing_files: 0 });
    for (const path of [
      'orgs/organization.ndjson',
      'orgs/environments.ndjson',
      'orgs/members.ndjson',
      'orgs/invitations.ndjson',
      'orgs/upgrade_requests.ndjson',
      'auth/api_keys.ndjson',
      'auth/sso_configurations.ndjson',
      'mailbox/inboxes.ndjson',
      'mailbox/threads.ndjson',
      'mailbox/messages.ndjson',
      'mailbox/attachments.ndjson',
      'webhooks/endpoints.ndjson',
      'webhooks/deliveries.ndjson',
      'domains/domains.ndjson',
    ]) {
      expect(entries.has(path)).toBe(true);
      expect(manifest.resources).toContainEqual({ path, records: ndjson(entries, path).length });
    }
    expect(ndjson(entries, 'orgs/organization.ndjson')).toEqual([expect.objectContaining({ id: tenant.org_id })]);
    expect(ndjson(entries, 'orgs/members.ndjson')).toEqual([expect.objectContaining({ org_id: tenant.org_id, role: 'owner', user: expect.objectContaining({ email: tenant.email.toLowerCase() }) })]);
    expect(ndjson(entries, 'mailbox/inboxes.ndjson')).toEqual([expect.objectContaining({ id: inbox.inbox_id, address: inbox.address })]);
    const exported = ndjson(entries, 'mailbox/messages.ndjson');
    expect(exported.map((m) => m.id).sort()).toEqual(messages.map((m) => m.message_id).sort());
    expect(exported.every((m) => m.org_id === tenant.org_id && typeof m.file === 'string' && !('text_body' in m))).toBe(true);
    expect(ndjson(entries, 'mailbox/attachments.ndjson').map((a) => a.filename).sort()).toEqual(['big.bin', 'notes.txt', 'report.pdf']);
    const keys = ndjson(entries, 'auth/api_keys.ndjson');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.org_id === tenant.org_id && !('key_hash' in k))).toBe(true);
    expect(ndjson(entries, 'webhooks/endpoints.ndjson')).toEqual([expect.objectContaining({ id: hook.body.id, url: 'https://hooks.example.com/mailroom' })]);
    expect(ndjson(entries, 'domains/domains.ndjson')).toEqual([expect.objectContaining({ name: 'exported.example.com', dkim_public_key: expect.any(String) })]);
    const text = [...entries].filter(([name]) => name.endsWith('.ndjson')).map(([, b]) => b.toString('utf8')).join('');
    expect(text).not.toContain(tenant.key);
    expect(text).not.toContain(hook.body.secret);
    for (const secret of ['key_hash', 'secret_sealed', 'private_key', 'token_hash', 'password']) expect(text).not.toContain(secret);

    const listed = await api.get('/api/v1/admin/exports?limit=1', { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: started.body.id, status: 'completed' })]);
  });

  it('refuses a second export of an organization while one runs, naming it', async () => {
    // The mailbox's inboxes held locked: the export waits there, running, until the test lets it go.
    const held = db.transaction().execute(async (tx) => {
      await sql`lock table mailbox.inboxes in access exclusive mode`.execute(tx);
      const first = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
      expect(first.status).toBe(202);
      const second = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({ code: 'conflict', request_id: expect.any(String) });
      expect(second.body.error.message).toContain(first.body.id);
      const running = await waitFor(async () => {
        const res = await api.get(`/api/v1/admin/exports/${first.body.id}`, { token: admin });
        return res.body.status === 'running' && res.body.progress.current_resource === 'mailbox/inboxes' && res.body;
      }, { timeoutMs: 20_000, what: 'the export to reach the mailbox' });
      expect(running.progress.resources_done).toBe(7);
      expect((await bytesOf(`/api/v1/admin/exports/${first.body.id}/download`, admin)).status).toBe(409);
      return first.body.id as string;
    });
    const id = await held;
    await waitForExport(id, 'completed');
    const again = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
    expect(again.status).toBe(202);
    await waitForExport(again.body.id, 'completed');
  });

  it('deletes an archive once its export expired (410), and answers bad input in the error shape', async () => {
    const started = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin, headers: { 'idempotency-key': 'export-3' } });
    expect(started.status).toBe(202);
    // The same key again: the first answer, not a second export.
    const replayed = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin, headers: { 'idempotency-key': 'export-3' } });
    expect([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.body.id]).toEqual([202, 'true', started.body.id]);
    await waitForExport(started.body.id, 'completed');
    // Seven days on, as far as this export is concerned: the purge deletes its archive.
    await sql`update admin.exports set expires_at = now() - interval '1 second' where id = ${started.body.id}`.execute(db);
    const expired = await waitForExport(started.body.id, 'expired');
    expect(expired.download_url).toBeNull();
    const gone = await api.get(`/api/v1/admin/exports/${started.body.id}/download`, { token: admin });
    expect(gone.status).toBe(410);
    expect(gone.body.error.code).toBe('expired');

    const cases: [string, string, number][] = [
      ['POST', '/api/v1/admin/orgs/org_01jzzzzzzzzzzzzzzzzzzzzzzz/export', 404],
      ['POST', '/api/v1/admin/orgs/nope/export', 400],
      ['GET', '/api/v1/admin/exports/exp_01jzzzzzzzzzzzzzzzzzzzzzzz', 404],
      ['GET', '/api/v1/admin/exports/exp_01jzzzzzzzzzzzzzzzzzzzzzzz/download', 404],
      ['GET', '/api/v1/admin/exports/nope', 400],
      ['GET', '/api/v1/admin/exports?limit=0', 400],
      ['GET', '/api/v1/admin/exports?page_token=bogus', 400],
    ];
    for (const [method, path, status] of cases) {
      const res = await anon.request(method, path, undefined, { token: admin });
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(res.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
    }
  });

  it('refuses tenant credentials on every export route', async () => {
    const routes: [string, string][] = [
      ['POST', `/api/v1/admin/orgs/${tenant.org_id}/export`],
      ['GET', '/api/v1/admin/exports'],
      ['GET', '/api/v1/admin/exports/exp_01jzzzzzzzzzzzzzzzzzzzzzzz'],
      ['GET', '/api/v1/admin/exports/exp_01jzzzzzzzzzzzzzzzzzzzzzzz/download'],
    ];
    for (const [method, path] of routes) {
      for (const token of [tenant.key, tenant.accessToken]) {
        const res = await anon.request(method, path, undefined, { token });
        expect([method, path, res.status]).toEqual([method, path, 403]);
      }
      expect((await anon.request(method, path)).status).toBe(401);
    }
  });
});
