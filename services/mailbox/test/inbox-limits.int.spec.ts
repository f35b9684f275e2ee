/**
 * The plan's inbox limit against the real server: the organization's live inboxes, every
 * environment together, counted under a lock on the organization in the transaction of the
 * insert, so creations racing from several environments never pass it.
 */
import path from 'node:path';
import { transactor, type Kysely } from '@mailroom/db';
import { DEFAULT_PLAN_LIMITS, newId, type OrganizationLimits, type Tenant } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { DeletedEnvironments } from '@mailroom/runtime';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { Inboxes } from '../src/domain/inboxes';
import { InboxRepository } from '../src/repo/inbox.repository';
import type { MailboxDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MailboxDb>;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<MailboxDb>(ctx, { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations'), max: 8 });
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const plans = { ...DEFAULT_PLAN_LIMITS, free: { ...DEFAULT_PLAN_LIMITS.free, inboxes: 3 } };

function inboxes(answer: OrganizationLimits = { plan: 'free', limits: plans.free, plans }) {
  const asked: string[] = [];
  const api = new Inboxes(
    new InboxRepository(db),
    new ManualClock(new Date('2026-11-26T10:00:00.000Z')),
    'agents.test',
    transactor(db),
    { of: async (orgId) => (asked.push(orgId), answer) },
    new DeletedEnvironments<MailboxDb>(),
    { statusOf: async () => null },
  );
  return { api, asked };
}

it('lets no more than the limit in when creations race from two environments of one organization', async () => {
  const { api, asked } = inboxes();
  const org = newId('organization');
  const envs: Tenant[] = [
    { org_id: org, env_id: newId('environment') },
    { org_id: org, env_id: newId('environment') },
  ];
  const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => api.create(envs[i % 2]!, {})));
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  for (const r of results) {
    if (r.status === 'rejected') {
      expect(r.reason).toMatchObject({ code: 'plan_limit', status: 403, message: 'the free plan allows 3 inboxes; the pro plan allows 1000: ask for it with POST /api/v1/org/upgrade-request' });
    }
  }
  expect(asked).toEqual(Array.from({ length: 10 }, () => org));
  // Another organization has its own room; a deleted inbox frees its place.
  expect((await api.create({ org_id: newId('organization'), env_id: newId('environment') }, {})).address).toMatch(/@agents\.test$/);
  const listed = await Promise.all(envs.map(async (t) => ({ t, data: (await api.list(t, { limit: 10 })).data })));
  expect(listed.flatMap((l) => l.data)).toHaveLength(3);
  const held = listed.find((l) => l.data.length > 0)!;
  await api.delete(held.t, held.data[0]!.inbox_id);
  expect((await api.create(envs[0]!, { username: 'again' })).address).toBe('again@agents.test');
  expect((await api.create(envs[1]!, {}).catch((err: unknown) => err))).toMatchObject({ code: 'plan_limit' });
});

it('holds any number on a plan without a limit', async () => {
  const { api } = inboxes({ plan: 'enterprise', limits: plans.enterprise, plans });
  const t = { org_id: newId('organization'), env_id: newId('environment') };
  for (let i = 0; i < 5; i++) await api.create(t, {});
  expect((await api.list(t, { limit: 10 })).data).toHaveLength(5);
});
