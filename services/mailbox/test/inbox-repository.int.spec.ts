/**
 * Which inbox an address belonged to at a moment, against the real server: the inbound
 * consumer asks this for mail the edge accepted (from its recipient cache) for an inbox
 * deleted before the mail arrived. And what stops a new inbox: its address, or its
 * environment recorded as deleted.
 */
import path from 'node:path';
import { withTransaction, type Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { DeletedEnvironments } from '@mailroom/runtime';
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

it('inserts an inbox unless its address is live or its environment was deleted, and says which', async () => {
  const t = { org_id: 'org_e', env_id: 'env_e' };
  const row = (username: string, tenant = t) => ({
    id: newId('inbox'),
    ...tenant,
    username,
    domain: 'agents.test',
    address: `${username}@agents.test`,
    display_name: null,
    status: 'active' as const,
    created_at: at(0),
    updated_at: at(0),
  });
  expect(await repo.insert(row('fresh'))).toBe('inserted');
  expect(await repo.insert(row('fresh', { org_id: 'org_f', env_id: 'env_f' }))).toBe('address_taken');
  await withTransaction(db, (trx) => new DeletedEnvironments<MailboxDb>().record(trx, { ...t, deleted_at: at(1) }));
  expect(await repo.insert(row('later'))).toBe('environment_deleted');
  // Both at once: the environment is the answer.
  expect(await repo.insert(row('fresh'))).toBe('environment_deleted');
  // The same environment id under another organization is not deleted.
  expect(await repo.insert(row('elsewhere', { org_id: 'org_g', env_id: 'env_e' }))).toBe('inserted');
  expect(await repo.softDeleteAllIn(t, at(2))).toHaveLength(1);
  expect(await repo.countLive(t)).toBe(0);
});
