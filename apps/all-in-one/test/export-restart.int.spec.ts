/**
 * An export interrupted by a restart of the admin service (issue 28, part 4): the instance
 * running it is stopped mid-way; the export is then `failed` ("interrupted"), never left
 * running, the organization is free for a new export, and the new instance completes it.
 * (An instance that dies without stopping leaves a heartbeat the purge finds stale: unit
 * tests of Exports.sweep.)
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { bootServices, waitFor, type BootedServices } from '@mailroom/testing';
import { SERVICES } from '../src/platform';
import { usePlatform } from './fixtures';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'services', 'admin', 'dist', 'cli.js');
let admin: string;
let db: Kysely<unknown>;
let instance: BootedServices | undefined;

// Every service but admin: the test runs admin's instances itself.
const { api, tenant, env } = usePlatform({ services: ['orgs', 'auth', 'mailbox', 'webhooks', 'domains', 'gateway'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
beforeAll(async () => {
  const { stdout } = await run(process.execPath, [CLI, 'create-key', '--name', 'restarts'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  admin = stdout.trim();
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
});
afterAll(async () => {
  await instance?.stop();
  await db?.destroy();
});

const exportOf = async (id: string) => (await api.get(`/api/v1/admin/exports/${id}`, { token: admin })).body;

it('marks an export failed when its instance stops mid-way, and lets a new one run', async () => {
  instance = await bootServices([SERVICES.admin], env);
  let id = '';
  // The mailbox's inboxes held locked: the export is running, waiting there, when its instance stops.
  await db.transaction().execute(async (tx) => {
    await sql`lock table mailbox.inboxes in access exclusive mode`.execute(tx);
    const started = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
    expect(started.status).toBe(202);
    id = started.body.id;
    await waitFor(async () => (await exportOf(id)).progress?.current_resource === 'mailbox/inboxes', { timeoutMs: 20_000, what: 'the export to reach the mailbox' });
    await instance!.stop();
    instance = undefined;
  });

  instance = await bootServices([SERVICES.admin], env);
  const failed = await exportOf(id);
  expect(failed).toMatchObject({ status: 'failed', download_url: null, error: expect.stringContaining('interrupted'), finished_at: expect.any(String) });
  expect((await api.get(`/api/v1/admin/exports/${id}/download`, { token: admin })).status).toBe(409);

  const again = await api.post(`/api/v1/admin/orgs/${tenant.org_id}/export`, undefined, { token: admin });
  expect(again.status).toBe(202);
  await waitFor(async () => (await exportOf(again.body.id)).status === 'completed', { timeoutMs: 30_000, what: 'the new export to complete' });
});
