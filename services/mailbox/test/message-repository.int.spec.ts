/**
 * Storing messages in one statement against the real server: several at once (the sends of
 * concurrent API calls), their threads' counters and previews, and what goes with each
 * message (attachments, labels, outbox row) only when the message itself was stored.
 */
import path from 'node:path';
import { sql, type Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { MessageRepository, type NewMessage } from '../src/repo/message.repository';
import type { MailboxDb } from '../src/repo/tables';

let ctx: TestContext;
let db: Kysely<MailboxDb>;
let repo: MessageRepository;
const inboxId = newId('inbox');

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<MailboxDb>(ctx, { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new MessageRepository(db);
  await db.insertInto('inboxes').values({ id: inboxId, org_id: 'org_a', env_id: 'env_a', username: 'support', domain: 'agents.test', address: 'support@agents.test', display_name: null, status: 'active' }).execute();
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, s));

function item(threadId: string, o: { create?: boolean; second: number; preview: string; rawId?: string; attachments?: number; outbox?: boolean }): NewMessage {
  const id = newId('message');
  return {
    message: {
      id,
      org_id: 'org_a',
      env_id: 'env_a',
      inbox_id: inboxId,
      thread_id: threadId,
      direction: 'outbound',
      raw_id: o.rawId ?? newId('raw'),
      raw_size: 0,
      message_id_header: `${id}@agents.test`,
      in_reply_to: null,
      references: ['a@x', 'b@x'],
      from_address: 'support@agents.test',
      from_name: 'Support',
      reply_to: [],
      to_addresses: ['ada@example.com'],
      cc_addresses: [],
      subject: 'Invoice',
      text_body: `${o.preview} — "quoted", \\ and ünïcode`,
      html_body: '',
      extracted_text: o.preview,
      has_attachments: (o.attachments ?? 0) > 0,
      auth: JSON.stringify({ spf: { result: 'none' } }),
      spam: JSON.stringify({ score: null, verdict: 'unscanned' }),
      mail_from: '',
      parse_error: null,
      received_at: at(o.second),
    },
    thread: o.create
      ? { create: true, row: { id: threadId, org_id: 'org_a', env_id: 'env_a', inbox_id: inboxId, subject: 'Invoice', normalized_subject: 'invoice', last_message_at: at(o.second), preview: o.preview } }
      : { create: false, preview: o.preview },
    attachments: Array.from({ length: o.attachments ?? 0 }, (_, i) => ({
      id: newId('attachment'),
      org_id: 'org_a',
      filename: `f${i}.txt`,
      content_type: 'text/plain',
      size: 3,
      content_id: null,
      disposition: 'attachment',
      checksum: 'c',
      position: i,
      object_name: `o.${i}`,
    })),
    labels: ['sent', 'important'],
    outbox: o.outbox === false ? null : { id: newId('event'), subject: 'mail.outbound', payload: `{"message_id":"${id}"}` },
  };
}

const thread = (id: string) => db.selectFrom('threads').select(['message_count', 'preview', 'last_message_at']).where('id', '=', id).executeTakeFirstOrThrow();

describe('insertMessages', () => {
  it('stores a batch: each message with its fields, new threads, and one counter update per thread whose newest message gives the preview', async () => {
    const [t1, t2] = [newId('thread'), newId('thread')];
    const first = item(t1, { create: true, second: 1, preview: 'first' });
    expect(await repo.insertMessages([first])).toEqual([true]);

    const batch = [item(t1, { second: 5, preview: 'newest' }), item(t2, { create: true, second: 2, preview: 'other thread', attachments: 2 }), item(t1, { second: 3, preview: 'older' })];
    // The first's outbox row written in a trace (its relay publishes it there), the others not.
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    batch[0]!.outbox!.traceparent = traceparent;
    expect(await repo.insertMessages(batch)).toEqual([true, true, true]);
    expect(await thread(t1)).toEqual({ message_count: 3, preview: 'newest', last_message_at: at(5) });
    expect(await thread(t2)).toEqual({ message_count: 1, preview: 'other thread', last_message_at: at(2) });

    const stored = await db.selectFrom('messages').selectAll().where('id', '=', batch[1]!.message.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ thread_id: t2, references: ['a@x', 'b@x'], to_addresses: ['ada@example.com'], text_body: 'other thread — "quoted", \\ and ünïcode', auth: { spf: { result: 'none' } }, received_at: at(2) });
    expect(await db.selectFrom('attachments').select(['filename', 'position']).where('message_id', '=', batch[1]!.message.id).orderBy('position').execute()).toEqual([
      { filename: 'f0.txt', position: 0 },
      { filename: 'f1.txt', position: 1 },
    ]);
    const labels = await db.selectFrom('message_labels').select(['message_id', 'label', 'thread_id']).where('message_id', 'in', batch.map((b) => b.message.id)).execute();
    expect(labels).toHaveLength(6);
    const outbox = await sql<{ id: string; traceparent: string | null }>`select id, traceparent from outbox where id = any(${batch.map((b) => b.outbox!.id)}::text[])`.execute(db);
    expect(Object.fromEntries(outbox.rows.map((r) => [r.id, r.traceparent]))).toEqual(Object.fromEntries(batch.map((b, i) => [b.outbox!.id, i === 0 ? traceparent : null])));
  });

  it('a message whose raw message the inbox holds is not stored again, and nothing of it is written', async () => {
    const t = newId('thread');
    const rawId = newId('raw');
    expect(await repo.insertMessages([item(t, { create: true, second: 1, preview: 'one', rawId })])).toEqual([true]);
    const again = item(t, { second: 9, preview: 'again', rawId, attachments: 1 });
    const fresh = item(t, { second: 4, preview: 'fresh' });
    expect(await repo.insertMessages([again, fresh])).toEqual([false, true]);
    expect(await thread(t)).toEqual({ message_count: 2, preview: 'fresh', last_message_at: at(4) });
    expect(await db.selectFrom('messages').select('id').where('id', '=', again.message.id).execute()).toEqual([]);
    expect(await db.selectFrom('attachments').select('id').where('message_id', '=', again.message.id).execute()).toEqual([]);
    expect(await db.selectFrom('message_labels').select('label').where('message_id', '=', again.message.id).execute()).toEqual([]);
    expect((await sql`select id from outbox where id = ${again.outbox!.id}`.execute(db)).rows).toEqual([]);
  });

  it('keeps the preview of a thread whose newest message is newer than the batch', async () => {
    const t = newId('thread');
    await repo.insertMessages([item(t, { create: true, second: 30, preview: 'latest' })]);
    await repo.insertMessages([item(t, { second: 10, preview: 'late arrival', outbox: false })]);
    expect(await thread(t)).toEqual({ message_count: 2, preview: 'latest', last_message_at: at(30) });
  });

  it('refuses a batch that creates a thread and adds to it, writing nothing', async () => {
    const t = newId('thread');
    const create = item(t, { create: true, second: 1, preview: 'a' });
    await expect(repo.insertMessages([create, item(t, { second: 2, preview: 'b' })])).rejects.toThrow('both creates a thread and adds to it');
    expect(await db.selectFrom('messages').select('id').where('id', '=', create.message.id).execute()).toEqual([]);
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('stores a message whose text and verdicts contain NUL characters without them (the raw bytes keep them)', async () => {
    const m = item(newId('thread'), { create: true, second: 1, preview: 'a\u0000b' });
    m.message.text_body = 'before\u0000after';
    m.message.subject = 'sub\u0000ject';
    m.message.auth = JSON.stringify({ spf: { result: 'none', comment: 'x\u0000y' } });
    expect(await repo.insertMessages([m])).toEqual([true]);
    const stored = await db.selectFrom('messages').select(['text_body', 'subject', 'auth']).where('id', '=', m.message.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ text_body: 'beforeafter', subject: 'subject', auth: { spf: { result: 'none', comment: 'xy' } } });
    expect((await thread(m.message.thread_id)).preview).toBe('ab');
  });
});

describe('inboxesHoldingRaw', () => {
  it('names the inboxes among those asked that hold the raw message', async () => {
    const rawId = newId('raw');
    await repo.insertMessages([item(newId('thread'), { create: true, second: 1, preview: 'x', rawId })]);
    const other = newId('inbox');
    expect(await repo.inboxesHoldingRaw(rawId, [other, inboxId])).toEqual([{ inbox_id: inboxId }]);
    expect(await repo.inboxesHoldingRaw(rawId, [other])).toEqual([]);
    expect(await repo.inboxesHoldingRaw(newId('raw'), [inboxId])).toEqual([]);
    expect(await repo.inboxesHoldingRaw(rawId, [])).toEqual([]);
  });
});
