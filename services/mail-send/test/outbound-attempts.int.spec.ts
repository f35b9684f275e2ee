/**
 * How many tries a message gets at the provider, against the real database: the hand-overs
 * made, not the work item's deliveries, which also count our own outages.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { transactor, type Kysely } from '@mailroom/db';
import { newId, type OutboundJob } from '@mailroom/contracts';
import { ManualClock, createLogger } from '@mailroom/platform';
import type { Bus } from '@mailroom/messaging';
import { Outbox } from '@mailroom/runtime';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { SendRepository } from '../src/repo/send.repository';
import type { SendDb } from '../src/repo/tables';
import { MAX_ATTEMPTS, OutboundSender } from '../src/domain/outbound';
import { Verp } from '../src/domain/verp';
import { ProviderError, type MailProvider } from '../src/providers/provider';

const log = createLogger({ service: 'test', level: 'silent' });
let ctx: TestContext;
let db: Kysely<SendDb>;
let repo: SendRepository;
let sender: OutboundSender;
/** The provider's answer to each hand-over: a temporary refusal (451) until told otherwise. */
let tries = 0;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<SendDb>(ctx, { schema: 'mail_send', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new SendRepository(db);
  const outbox = new Outbox<SendDb>(db, {} as Bus, log);
  await outbox.stop();
  const provider: MailProvider = {
    name: 'smtp',
    send: async () => {
      tries++;
      throw new ProviderError('451 4.7.1 greylisted, try again later', true);
    },
    close: async () => {},
  };
  const verp = new Verp(randomBytes(32).toString('base64'), 'bounces.test');
  const identity = { of: async (j: Pick<OutboundJob, 'message_id'>) => ({ dkim: undefined, returnPath: verp.address(j.message_id) }) };
  // What is sent is kept in memory: the provider reads it back as a stream.
  const kept = new Map<string, Buffer>();
  const raws = {
    put: async (name: string, raw: Readable) => void kept.set(name, await buffer(raw)),
    open: async (name: string) => (kept.has(name) ? Readable.from([kept.get(name)!]) : null),
    delete: async (name: string) => void kept.delete(name),
  };
  sender = new OutboundSender(transactor(db), repo, provider, raws, async () => null, identity, outbox, new ManualClock(new Date()));
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

function job(): OutboundJob {
  return {
    message_id: newId('message'),
    thread_id: newId('thread'),
    inbox_id: newId('inbox'),
    org_id: newId('organization'),
    env_id: newId('environment'),
    raw_id: newId('raw'),
    message_id_header: `${newId('message')}@agents.test`,
    from: { address: 'agent@agents.test', name: null },
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    subject: 'Hello',
    text_body: 'hi',
    html_body: null,
    in_reply_to: null,
    references: [],
    attachments: [],
    headers: {},
    created_at: new Date().toISOString(),
  };
}

it('gives a message its tries at the provider whatever its deliveries: an outage that redelivered it many times uses none', async () => {
  const j = job();
  // The 20th delivery of the item (our database was down for the first 19): the first try at the provider.
  expect(await sender.send(j, 20, { log })).toBe('retry');
  for (let i = 2; i < MAX_ATTEMPTS; i++) expect(await sender.send(j, 20 + i, { log })).toBe('retry');
  // The 12th refusal at the provider ends it, as a soft bounce.
  expect(await sender.send(j, 40, { log })).toBe('bounced');
  expect(tries).toBe(MAX_ATTEMPTS);
  expect((await repo.find(j.message_id))).toMatchObject({ status: 'bounced', attempts: MAX_ATTEMPTS });
});
