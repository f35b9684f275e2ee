/**
 * An organization's count for its usage against the real server: live inboxes in every
 * environment, read from an index that starts with the organization (the messages it received
 * are the metrics service's to count).
 */
import path from 'node:path';
import type { Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { createTestContext, genericPlanOf, migratedDb, type TestContext } from '@mailroom/testing';
import { InboxRepository } from '../src/repo/inbox.repository';
import type { MailboxDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MailboxDb>;
let inboxes: InboxRepository;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<MailboxDb>(ctx, { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations') });
  inboxes = new InboxRepository(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const start = new Date('2026-11-01T00:00:00.000Z');

async function inbox(org: string, env: string, o: { deleted?: boolean; paused?: boolean } = {}): Promise<string> {
  const id = newId('inbox');
  const username = id.slice(4);
  await db
    .insertInto('inboxes')
    .values({ id, org_id: org, env_id: env, username, domain: 'agents.test', address: `${username}@agents.test`, display_name: null, status: o.paused ? 'paused' : 'active', deleted_at: o.deleted ? start : null })
    .execute();
  return id;
}

describe('inboxes of an organization', () => {
  it('counts live inboxes (paused ones too) of every environment, not deleted ones nor another organization\'s', async () => {
    const [org, other] = [newId('organization'), newId('organization')];
    await inbox(org, 'env_a');
    await inbox(org, 'env_b', { paused: true });
    await inbox(org, 'env_a', { deleted: true });
    await inbox(other, 'env_a');
    expect(await inboxes.countLiveInOrg(org)).toBe(2);
    expect(await inboxes.countLiveInOrg(other)).toBe(1);
  });

  it('reads an index that starts with the organization', async () => {
    const org = newId('organization');
    const plan = await genericPlanOf(db, (trx) => inboxes.countLiveInOrg(org, trx), [org]);
    expect(plan).toMatch(/inboxes_by_tenant/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
