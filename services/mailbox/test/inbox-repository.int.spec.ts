/**
 * Which inbox an address belonged to at a moment, against the real server: the inbound
 * consumer asks this for mail the edge accepted (from its recipient cache) for an inbox
 * deleted before the mail arrived.
 */
import path from 'node:path';
import type { Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { InboxRepository } from '../src/repo/inbox.repository';
import type { MailboxDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MailboxDb>;
let repo: InboxRepository;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<MailboxDb>(ctx, { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new InboxRepository(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const at = (minute: number) => new Date(Date.UTC(2026, 10, 23, 10, minute));

async function inbox(org: string, address: string, created: number, deleted: number | null): Promise<string> {
  const id = newId('inbox');
  const [username, domain] = address.split('@') as [string, string];
  await db
    .insertInto('inboxes')
    .values({ id, org_id: org, env_id: `env_${org}`, username, domain, address, display_name: null, status: 'active', created_at: at(created), updated_at: at(created), deleted_at: deleted === null ? null : at(deleted) })
    .execute();
  return id;
}

it('answers the inbox whose lifetime holds the moment, deleted since or not, and none between owners', async () => {
  // org_a had the address from 10:00 to 10:10, org_b from 10:20 to 10:30, org_c since 10:40.
  const a = await inbox('a', 'reuse@agents.test', 0, 10);
  const b = await inbox('b', 'reuse@agents.test', 20, 30);
  const c = await inbox('c', 'reuse@agents.test', 40, null);
  await inbox('d', 'other@agents.test', 0, null);

  expect((await repo.ownerAt('reuse@agents.test', at(5)))?.id).toBe(a);
  expect(await repo.ownerAt('reuse@agents.test', at(10))).toBeUndefined();
  expect(await repo.ownerAt('reuse@agents.test', at(15))).toBeUndefined();
  expect((await repo.ownerAt('reuse@agents.test', at(20)))?.id).toBe(b);
  expect((await repo.ownerAt('reuse@agents.test', at(29)))?.id).toBe(b);
  expect((await repo.ownerAt('reuse@agents.test', at(50)))?.id).toBe(c);
  expect(await repo.ownerAt('nobody@agents.test', at(50))).toBeUndefined();
});
