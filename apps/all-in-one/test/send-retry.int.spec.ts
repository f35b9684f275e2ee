/**
 * A send retried after its answer was lost is one message (found by the fault campaign,
 * `npm run test:faults`: a mailbox instance killed after storing a reply and before
 * answering; the gateway answered 504, which it does not keep under the Idempotency-Key, and
 * the client's retry with the same key made and sent a second reply). The gateway passes its
 * key of the Idempotency-Key to the service (Mr-Request-Key); the mailbox gives a retry the
 * first try's ids, and the message is stored once per (inbox, raw id).
 */
import { Kvm } from '@nats-io/kv';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { callRpc, type Bus } from '@mailroom/messaging';
import { KEY_SCOPES, KV_BUCKETS, newId, type AuthContext } from '@mailroom/contracts';
import { connectTestBus } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const p = usePlatform();
let bus: Bus;
let db: Kysely<unknown>;
let inboxId: string;

beforeAll(async () => {
  bus = await connectTestBus(p.env);
  db = createDb<unknown>({ url: p.env.DATABASE_URL!, schema: 'mailbox', max: 1 });
  const inbox = await p.api.post('/api/v1/inboxes', { username: 'retry' });
  expect(inbox.status).toBe(201);
  inboxId = inbox.body.inbox_id;
});

afterAll(async () => {
  await db?.destroy();
  await bus?.drain();
});

async function outbound(subject: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from messages where inbox_id = ${inboxId} and direction = 'outbound' and subject = ${subject}`.execute(db);
  return rows[0]!.n;
}

it('the same request key twice over the bus (the first answer lost): one message, the same ids', async () => {
  const auth: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), org_id: p.tenant.org_id, env_id: p.tenant.env_id, permissions: [...KEY_SCOPES.full] };
  const requestKey = 'a'.repeat(64);
  const send = { inbox_id: inboxId, to: ['ada@example.com'], subject: 'Lost answer', text_body: 'Sent once.' };
  const first = await callRpc(bus, 'mailbox.message.send', send, { auth, requestId: newId('request'), requestKey });
  const again = await callRpc(bus, 'mailbox.message.send', send, { auth, requestId: newId('request'), requestKey });
  expect(again).toEqual(first);
  expect(await outbound('Lost answer')).toBe(1);
  // Another key is another message.
  const other = await callRpc(bus, 'mailbox.message.send', send, { auth, requestId: newId('request'), requestKey: 'b'.repeat(64) });
  expect(other.message_id).not.toBe(first.message_id);
  expect(await outbound('Lost answer')).toBe(2);
});

it('a retry with the same Idempotency-Key after the gateway kept nothing (as after a 5xx): the same message, stored once', async () => {
  const body = { to: ['ada@example.com'], subject: 'Retried after a 5xx', text_body: 'Sent once.' };
  const headers = { 'idempotency-key': 'retry-after-5xx' };
  const first = await p.api.post(`/api/v1/inboxes/${inboxId}/messages/send`, body, { headers });
  expect(first.status).toBe(200);
  // The gateway releases its record when the call fails with 5xx: here every record is dropped.
  const kv = await new Kvm(bus.js).open(bus.ns.stream(KV_BUCKETS.idempotency.name));
  for await (const key of await kv.keys()) await kv.purge(key);
  const again = await p.api.post(`/api/v1/inboxes/${inboxId}/messages/send`, body, { headers });
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBeNull();
  expect(again.body.message_id).toBe(first.body.message_id);
  expect(await outbound('Retried after a 5xx')).toBe(1);
});
