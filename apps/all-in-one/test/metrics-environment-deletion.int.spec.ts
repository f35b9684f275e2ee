/**
 * A deleted environment's rollups are deleted (issue 27): mail received in a staging
 * environment is counted, the environment is emptied and deleted through the API, and once the
 * metrics service read orgs' fact (`metrics--environment-deleted`) its rows are gone, the
 * organization's usage no longer counts its mail, the production environment's counts stay,
 * and a replay of the stream (which still holds the staging events) does not bring them back.
 */
import nodemailer from 'nodemailer';
import { createLogger } from '@mailroom/platform';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { replayRollups } from '@mailroom/metrics';
import { freePort, waitFor, type ApiClient } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
let smtpPort: number;
beforeAll(async () => {
  smtpPort = await freePort();
});
const { anon, api, tenant, env } = usePlatform({ env: () => ({ MAIL_DOMAIN: DOMAIN, SMTP_PORT: String(smtpPort), RSPAMD_URL: 'off' }) });

let db: Kysely<unknown>;
beforeAll(() => {
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 2 });
});
afterAll(async () => {
  await db?.destroy();
});

const owner = () => anon.withToken(tenant.accessToken);
const received = async () => (await api.get('/api/v1/org/usage')).body.usage.messages_received.used as number;
const rowsOf = async (envId: string) => (await sql<{ n: number }>`select (select count(*) from metrics.hourly_counts where env_id = ${envId})::int as n`.execute(db)).rows[0]!.n;

async function receive(to: string, reader: ApiClient, inboxId: string, headers: Record<string, string> = {}): Promise<void> {
  const subject = `For ${to}`;
  await nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' }).sendMail({ from: 'ada@sender.test', to, subject, text: 'Hello.' });
  await waitFor(
    async () => {
      const res = await reader.get(`/api/v1/inboxes/${inboxId}/messages`, { headers });
      return res.status === 200 && res.body.data.some((m: { subject: string }) => m.subject === subject);
    },
    { timeoutMs: 20_000, what: `"${subject}" stored` },
  );
}

it("deletes the environment's rollups, keeps the others', and a replay does not bring them back", async () => {
  const staging = (await owner().post('/api/v1/environments', { name: 'staging' })).body.id as string;
  const inStaging = { 'x-env-id': staging };
  const kept = (await api.post('/api/v1/inboxes', { username: 'kept' })).body;
  const doomed = await owner().post('/api/v1/inboxes', { username: 'doomed' }, { headers: inStaging });
  expect(doomed.status).toBe(201);
  await receive(kept.address, api, kept.inbox_id);
  await receive(doomed.body.address, owner(), doomed.body.inbox_id, inStaging);
  await waitFor(async () => (await received()) === 2, { timeoutMs: 20_000, what: 'both receipts in the rollups' });
  const stagingRows = await rowsOf(staging);
  expect(stagingRows).toBeGreaterThan(0);
  const productionRows = await rowsOf(tenant.env_id);

  // Emptied (an environment holding an inbox is not deleted), then deleted.
  expect((await owner().delete(`/api/v1/inboxes/${doomed.body.inbox_id}`, { headers: inStaging })).status).toBe(204);
  expect((await owner().delete(`/api/v1/environments/${staging}`)).status).toBe(204);
  await waitFor(async () => (await rowsOf(staging)) === 0, { timeoutMs: 20_000, what: "the staging environment's rollups deleted" });
  expect((await sql`select org_id from metrics.deleted_environments where env_id = ${staging}`.execute(db)).rows).toEqual([{ org_id: tenant.org_id }]);
  expect(await received()).toBe(1);
  expect(await rowsOf(tenant.env_id)).toBe(productionRows);

  // The stream still holds the staging events: a replay reads them and counts none.
  const replay = await replayRollups(env, createLogger({ service: 'test', level: 'silent' }));
  expect(replay.counted).toBe(replay.read);
  expect(await rowsOf(staging)).toBe(0);
  expect(await rowsOf(tenant.env_id)).toBe(productionRows);
  expect(await received()).toBe(1);
});
