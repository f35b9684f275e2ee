/**
 * Nothing lives on in a deleted environment (issue 23). Orgs counts what an environment holds,
 * then deletes it: not one transaction with auth, mailbox and webhooks, so a key, an inbox or
 * an endpoint can be made in between, and a stale gateway may still pass a request for it
 * afterwards. The owners close it when they read orgs' fact:
 * - what the environment held when the fact was read is removed (the key stops working);
 * - what a request asks to create there afterwards is refused (404), whoever let it through;
 * - the fact read again changes nothing; a fact orgs did not make (the environment is still
 *   there) removes nothing.
 * The race is played deterministically: the resources are made first, then the environment is
 * deleted as orgs' delete does once its count missed them (its row, then the fact); the
 * late requests are sent over the bus as a gateway that still believed in the environment
 * would send them (sealed tenant contexts).
 */
import { newId, type AuthContext, type Fact } from '@mailroom/contracts';
import { createDb, sql, type Kysely, type RawBuilder } from '@mailroom/db';
import { callRpc, decodeJson, publishFact, type Bus } from '@mailroom/messaging';
import { connectTestBus, waitFor } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const { anon, tenant, env } = usePlatform();

const OWNERS = ['auth--environment-deleted', 'mailbox--environment-deleted', 'webhooks--environment-deleted'];
const DELETED = 'internal.orgs.environment.deleted';

let bus: Bus;
let db: Kysely<unknown>;
let ownerId: string;

beforeAll(async () => {
  bus = await connectTestBus(env);
  db = createDb<unknown>({ url: env.DATABASE_URL!, schema: 'public', max: 2 });
  ownerId = (await anon.get('/api/v1/user/me', { token: tenant.accessToken })).body.id;
});

afterAll(async () => {
  await bus?.drain();
  await db?.destroy();
});

const owner = () => anon.withToken(tenant.accessToken);
const inEnv = (envId: string) => ({ headers: { 'x-env-id': envId } });
/** The owner acting in `envId`, as the gateway seals it after admitting a request. */
const ownerIn = (envId: string): AuthContext => ({ kind: 'user', user_id: ownerId, session_id: newId('session'), org_id: tenant.org_id, env_id: envId, role: 'owner' });
const call = (auth: AuthContext) => ({ auth, requestId: newId('request') });

async function createEnvironment(): Promise<string> {
  const res = await owner().post('/api/v1/environments', { name: `doomed-${newId('request').slice(-8)}` });
  if (res.status !== 201) throw new Error(`creating an environment answered ${res.status}: ${res.text}`);
  return res.body.id;
}

/** A key, an inbox and a webhook endpoint in `envId`, made over HTTP while it exists. */
async function fill(envId: string): Promise<{ key: { id: string; key: string }; inboxId: string; endpointId: string }> {
  const key = await owner().post('/api/v1/keys', { name: 'staging agent' }, inEnv(envId));
  expect([key.status, key.body.env_id]).toEqual([201, envId]);
  const agent = anon.withToken(key.body.key);
  const inbox = await agent.post('/api/v1/inboxes', {});
  expect(inbox.status).toBe(201);
  const endpoint = await agent.post('/api/v1/webhooks/endpoints', { url: 'https://hooks.example.com/mailroom' });
  expect(endpoint.status).toBe(201);
  return { key: key.body, inboxId: inbox.body.inbox_id, endpointId: endpoint.body.id };
}

/** The stream sequence of the last deletion fact, once it names `envId`. */
async function factOf(envId: string): Promise<number> {
  const stream = bus.ns.stream('ORGS_FACTS');
  return waitFor(
    async () => {
      const m = await bus.jsm.streams.getMessage(stream, { last_by_subj: bus.ns.subject(DELETED) });
      if (!m) return undefined;
      const fact = decodeJson(m.data);
      return typeof fact === 'object' && fact !== null && 'env_id' in fact && fact.env_id === envId ? m.seq : undefined;
    },
    { timeoutMs: 10_000, what: `the deletion fact of ${envId}` },
  );
}

/** Resolves once auth, mailbox and webhooks have each answered the fact at `seq` (and all before it). */
async function answeredByOwners(seq: number): Promise<void> {
  const stream = bus.ns.stream('ORGS_FACTS');
  for (const durable of OWNERS) {
    await waitFor(
      async () => {
        const info = await bus.jsm.consumers.info(stream, bus.ns.consumer(durable));
        return info.delivered.stream_seq >= seq && info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 10_000, what: `${durable} to answer fact ${seq}` },
    );
  }
}

/** Deletes the environment as orgs' delete does once its count found it empty: the row, then the fact. */
async function deleteBehindTheCount(envId: string): Promise<number> {
  await sql`delete from orgs.environments where id = ${envId} and org_id = ${tenant.org_id}`.execute(db);
  const fact: Fact<typeof DELETED> = { org_id: tenant.org_id, env_id: envId, deleted_at: new Date().toISOString() };
  return (await publishFact(bus, DELETED, fact, newId('event'))).seq;
}

/** What each owner keeps of `envId`'s resources: rows as the next reading of a fact must leave them. */
async function traces(ids: { key: { id: string }; inboxId: string; endpointId: string }, envId: string) {
  const one = async (q: RawBuilder<unknown>) => (await q.execute(db)).rows;
  return {
    key: await one(sql`select revoked_at from auth.api_keys where id = ${ids.key.id}`),
    inbox: await one(sql`select deleted_at, updated_at from mailbox.inboxes where id = ${ids.inboxId}`),
    endpoint: await one(sql`select id from webhooks.endpoints where id = ${ids.endpointId}`),
    recorded: await Promise.all(['auth', 'mailbox', 'webhooks'].map((schema) => one(sql`select deleted_at from ${sql.table(`${schema}.deleted_environments`)} where env_id = ${envId}`))),
  };
}

async function revocationsAnnounced(): Promise<number> {
  return (await bus.jsm.streams.info(bus.ns.stream('AUTH_FACTS'))).state.messages;
}

/** Every creation a gateway could pass for `envId`, sent as it would: each must be refused as an environment not there. */
async function expectCreationsRefused(envId: string): Promise<void> {
  const refusals = await Promise.all([
    callRpc(bus, 'auth.apikey.create', { name: 'late key' }, call(ownerIn(envId))).then(() => undefined, (err: unknown) => err),
    callRpc(bus, 'mailbox.inbox.create', {}, call(ownerIn(envId))).then(() => undefined, (err: unknown) => err),
    callRpc(bus, 'webhooks.endpoint.create', { url: 'https://late.example.com/hook' }, call(ownerIn(envId))).then(() => undefined, (err: unknown) => err),
  ]);
  for (const refusal of refusals) expect(refusal).toMatchObject({ code: 'not_found', message: 'environment not found', status: 404 });
}

it('refuses what a stale gateway lets through into an environment deleted through the API', async () => {
  const envId = await createEnvironment();
  expect((await owner().delete(`/api/v1/environments/${envId}`)).status).toBe(204);
  await answeredByOwners(await factOf(envId));
  await expectCreationsRefused(envId);
  expect(await sql`select count(*)::int as n from auth.api_keys where env_id = ${envId}`.execute(db)).toMatchObject({ rows: [{ n: 0 }] });
  expect(await sql`select count(*)::int as n from mailbox.inboxes where env_id = ${envId}`.execute(db)).toMatchObject({ rows: [{ n: 0 }] });
  expect(await sql`select count(*)::int as n from webhooks.endpoints where env_id = ${envId}`.execute(db)).toMatchObject({ rows: [{ n: 0 }] });
});

it('removes what was made before the owners read the fact, refuses what comes after, and changes nothing when the fact comes again', async () => {
  const envId = await createEnvironment();
  const made = await fill(envId);
  const agent = anon.withToken(made.key.key);
  expect((await agent.get('/api/v1/inboxes')).status).toBe(200);

  await answeredByOwners(await deleteBehindTheCount(envId));
  // The key stops working (a gateway's cache holds a key for at most a second).
  await waitFor(async () => (await agent.get('/api/v1/inboxes')).status === 401, { timeoutMs: 3_000, intervalMs: 50, what: 'the key of the deleted environment to be refused' });
  const refused = await agent.get('/api/v1/inboxes');
  expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
  // The inbox and the endpoint are gone for whoever still asks in the environment.
  await expect(callRpc(bus, 'mailbox.inbox.get', { id: made.inboxId }, call(ownerIn(envId)))).rejects.toMatchObject({ code: 'not_found' });
  await expect(callRpc(bus, 'webhooks.endpoint.get', { id: made.endpointId }, call(ownerIn(envId)))).rejects.toMatchObject({ code: 'not_found' });
  const after = await traces(made, envId);
  expect(after.key).toEqual([{ revoked_at: expect.any(Date) }]);
  expect(after.inbox).toEqual([{ deleted_at: expect.any(Date), updated_at: expect.any(Date) }]);
  expect(after.endpoint).toEqual([]);
  for (const recorded of after.recorded) expect(recorded).toEqual([{ deleted_at: expect.any(Date) }]);

  await expectCreationsRefused(envId);

  // The fact again (a redelivery, or orgs' relay publishing twice): nothing moves, nothing is announced.
  const announced = await revocationsAnnounced();
  await answeredByOwners((await publishFact(bus, DELETED, { org_id: tenant.org_id, env_id: envId, deleted_at: new Date().toISOString() }, newId('event'))).seq);
  expect(await traces(made, envId)).toEqual(after);
  expect(await revocationsAnnounced()).toBe(announced);
});

it('removes nothing on a deletion fact orgs did not make: the environment is still there', async () => {
  const envId = await createEnvironment();
  const made = await fill(envId);
  const before = await traces(made, envId);
  // Sealed with the fact's key, as a compromised reader of it could: the owners ask orgs first.
  await answeredByOwners((await publishFact(bus, DELETED, { org_id: tenant.org_id, env_id: envId, deleted_at: new Date().toISOString() }, newId('event'))).seq);
  expect(await traces(made, envId)).toEqual(before);
  expect(before.recorded).toEqual([[], [], []]);
  const agent = anon.withToken(made.key.key);
  expect((await agent.get(`/api/v1/inboxes/${made.inboxId}`)).status).toBe(200);
  expect((await agent.get(`/api/v1/webhooks/endpoints/${made.endpointId}`)).status).toBe(200);
});
