/**
 * An organization's counts for its usage against the real server: live inboxes in every
 * environment, and messages received in a period (inbound, not spam), each read from an index
 * that starts with the organization.
 */
import path from 'node:path';
import type { Kysely } from '@mailroom/db';
import { newId, type SpamResult } from '@mailroom/contracts';
import { createTestContext, genericPlanOf, migratedDb, type TestContext } from '@mailroom/testing';
import { InboxRepository } from '../src/repo/inbox.repository';
import { MessageRepository } from '../src/repo/message.repository';
import type { MailboxDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MailboxDb>;
let inboxes: InboxRepository;
let messages: MessageRepository;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<MailboxDb>(ctx, { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations') });
  inboxes = new InboxRepository(db);
  messages = new MessageRepository(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const start = new Date('2026-11-01T00:00:00.000Z');
const end = new Date('2026-12-01T00:00:00.000Z');

async function inbox(org: string, env: string, o: { deleted?: boolean; paused?: boolean } = {}): Promise<string> {
  const id = newId('inbox');
  const username = id.slice(4);
  await db
    .insertInto('inboxes')
    .values({ id, org_id: org, env_id: env, username, domain: 'agents.test', address: `${username}@agents.test`, display_name: null, status: o.paused ? 'paused' : 'active', deleted_at: o.deleted ? start : null })
    .execute();
  return id;
}

async function message(org: string, inboxId: string, at: Date, o: { direction?: 'inbound' | 'outbound'; verdict?: SpamResult['verdict'] } = {}): Promise<void> {
  const threadId = newId('thread');
  await db.insertInto('threads').values({ id: threadId, org_id: org, env_id: 'env_a', inbox_id: inboxId, subject: 's', normalized_subject: 's', last_message_at: at }).execute();
  await db
    .insertInto('messages')
    .values({
      id: newId('message'),
      org_id: org,
      env_id: 'env_a',
      inbox_id: inboxId,
      thread_id: threadId,
      direction: o.direction ?? 'inbound',
      raw_id: newId('raw'),
      raw_size: 10,
      message_id_header: null,
      in_reply_to: null,
      references: [],
      from_address: 'ada@example.com',
      from_name: null,
      reply_to: [],
      to_addresses: [],
      cc_addresses: [],
      subject: 's',
      text_body: '',
      html_body: '',
      extracted_text: null,
      has_attachments: false,
      mail_from: '',
      parse_error: null,
      auth: JSON.stringify({}),
      spam: JSON.stringify({ score: null, verdict: o.verdict ?? 'ham' }),
      received_at: at,
    })
    .execute();
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

describe('messages received by an organization', () => {
  it('counts inbound messages that passed the spam check in [start, end), in every inbox, deleted ones too', async () => {
    const [org, other] = [newId('organization'), newId('organization')];
    const [a, b, gone] = [await inbox(org, 'env_a'), await inbox(org, 'env_b'), await inbox(org, 'env_a', { deleted: true })];
    await message(org, a, start);
    await message(org, b, new Date(end.getTime() - 1), { verdict: 'unscanned' });
    await message(org, gone, new Date('2026-11-10T00:00:00Z'));
    // Not counted: spam, the copy of a sent message, outside the period, another organization's.
    await message(org, a, new Date('2026-11-10T00:00:00Z'), { verdict: 'spam' });
    await message(org, a, new Date('2026-11-10T00:00:00Z'), { direction: 'outbound' });
    await message(org, a, new Date(start.getTime() - 1));
    await message(org, a, end);
    const theirs = await inbox(other, 'env_a');
    await message(other, theirs, new Date('2026-11-10T00:00:00Z'));
    expect(await messages.countReceived(org, start, end)).toBe(3);
    expect(await messages.countReceived(other, start, end)).toBe(1);
  });

  it('reads the organization index, however the statement is planned', async () => {
    const org = newId('organization');
    // Generically too (as a prepared statement may be): the index's conditions are literals in the statement.
    const plan = await genericPlanOf(db, (trx) => messages.countReceived(org, start, end, trx), [org, start, end]);
    expect(plan).toMatch(/messages_received_by_org/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
