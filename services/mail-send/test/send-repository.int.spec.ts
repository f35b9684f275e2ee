/**
 * The send repository's one-statement writes against the real server: the pre-send admission
 * (suppressions, rates, the send log), the start of a hand-over (never twice once handed
 * over), and the record of an acceptance with its message.sent outbox row.
 */
import path from 'node:path';
import { sql, type Kysely } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { createTestContext, migratedDb, type TestContext } from '@mailroom/testing';
import { SendRepository } from '../src/repo/send.repository';
import type { SendDb } from '../src/repo/tables';
import { before } from '../src/domain/status';

let ctx: TestContext;
let db: Kysely<SendDb>;
let repo: SendRepository;

beforeAll(async () => {
  ctx = await createTestContext();
  db = await migratedDb<SendDb>(ctx, { schema: 'mail_send', migrationsDir: path.join(__dirname, '..', 'migrations') });
  repo = new SendRepository(db);
});

afterAll(async () => {
  await db?.destroy();
  await ctx?.cleanup();
});

const logged = async (orgId: string) => (await sql<{ n: number }>`select count(*)::int as n from send_log where org_id = ${orgId}`.execute(db)).rows[0]!.n;

describe('admit', () => {
  const at = new Date('2026-11-22T10:00:00Z');
  const since = new Date(at.getTime() - 60_000);
  const base = (org: string, inbox: string) => ({ org_id: org, env_id: 'env_a', inbox_id: inbox, addresses: ['ada@example.com'], message_id: null, since, at });

  it('counts the inbox and the organization, logs an admitted send, and logs nothing once a limit is reached', async () => {
    const org = newId('organization');
    for (let i = 0; i < 2; i++) expect(await repo.admit({ ...base(org, 'inb_1'), perInbox: 2, perOrg: 3 })).toMatchObject({ blocked: [], inbox: i, org: i });
    // The inbox is at its limit: refused by the caller, and not logged; the oldest send of the
    // window says when a place frees (the refusal's Retry-After).
    expect(await repo.admit({ ...base(org, 'inb_1'), perInbox: 2, perOrg: 3 })).toEqual({ blocked: [], inbox: 2, org: 2, inbox_oldest: at, org_oldest: at });
    expect(await logged(org)).toBe(2);
    // Another inbox of the organization still has room, until the organization's limit.
    expect(await repo.admit({ ...base(org, 'inb_2'), perInbox: 2, perOrg: 3 })).toMatchObject({ blocked: [], inbox: 0, org: 2 });
    expect(await repo.admit({ ...base(org, 'inb_2'), perInbox: 2, perOrg: 3 })).toMatchObject({ blocked: [], inbox: 1, org: 3 });
    expect(await logged(org)).toBe(3);
    // Sends older than `since` do not count.
    expect(await repo.admit({ ...base(org, 'inb_2'), since: new Date(at.getTime() + 1), perInbox: 2, perOrg: 3 })).toMatchObject({ blocked: [], inbox: 0, org: 0 });
  });

  it('names the suppressed recipients (case-insensitively, in this environment only) and logs nothing', async () => {
    const org = newId('organization');
    await repo.suppress({ org_id: org, env_id: 'env_a', address: 'Gone@Example.com', reason: 'hard_bounce', message_id: null });
    await repo.suppress({ org_id: org, env_id: 'env_b', address: 'angry@example.com', reason: 'complaint', message_id: null });
    const res = await repo.admit({ ...base(org, 'inb_1'), addresses: ['ada@example.com', 'GONE@example.com', 'angry@example.com'], perInbox: 5, perOrg: 5 });
    expect(res).toMatchObject({ blocked: [{ address: 'gone@example.com', reason: 'hard_bounce' }], inbox: 0, org: 0 });
    expect(await logged(org)).toBe(0);
  });

  it('logs a send retried under its message id once, at the retry\'s time: minutes later it counts in the retry\'s minute, never against itself', async () => {
    const org = newId('organization');
    const message = newId('message');
    const limits = { perInbox: 2, perOrg: 5 };
    expect(await repo.admit({ ...base(org, 'inb_1'), message_id: message, ...limits })).toMatchObject({ inbox: 0 });
    // 90 s later (its answer was lost, the client retried): its own row is not counted...
    const later = new Date(at.getTime() + 90_000);
    const window = { since: new Date(later.getTime() - 60_000), at: later };
    expect(await repo.admit({ ...base(org, 'inb_1'), ...window, message_id: message, ...limits })).toMatchObject({ inbox: 0, org: 0 });
    expect(await logged(org)).toBe(1);
    // ...and it now counts in the minute it was really sent in: a new send sees it.
    expect(await repo.admit({ ...base(org, 'inb_1'), ...window, message_id: newId('message'), ...limits })).toMatchObject({ inbox: 1, org: 1, inbox_oldest: later });
    expect(await logged(org)).toBe(2);
  });

  it('without limits, neither counts nor logs', async () => {
    const org = newId('organization');
    await repo.admit({ ...base(org, 'inb_1'), perInbox: 0, perOrg: 0 });
    expect(await repo.admit({ ...base(org, 'inb_1'), perInbox: 0, perOrg: 0 })).toEqual({ blocked: [], inbox: 0, org: 0, inbox_oldest: null, org_oldest: null });
    expect(await logged(org)).toBe(0);
  });
});

describe('a hand-over', () => {
  const row = (messageId: string) => ({
    message_id: messageId,
    org_id: 'org_a',
    env_id: 'env_a',
    inbox_id: 'inb_1',
    thread_id: 'thr_1',
    from_address: 'support@agents.test',
    to_addresses: ['ada@example.com', 'bob@example.com'],
    subject: 'Re: Invoice',
    provider: 'smtp',
  });
  const event = (id: string) => ({ id, subject: null, payload: `{"id":"${id}"}` });
  const accepted = (messageId: string, providerId: string, evt: string) => ({ message_id: messageId, sent_at: new Date('2026-11-22T10:00:00Z'), provider: 'smtp', provider_message_id: providerId, event: event(evt) });

  it('starts once per attempt until the provider accepted, then never again', async () => {
    const id = newId('message');
    expect(await repo.startSending([row(id)])).toEqual([true]);
    expect(await repo.find(id)).toMatchObject({ status: 'sending', to_addresses: ['ada@example.com', 'bob@example.com'], subject: 'Re: Invoice', provider: 'smtp', attempts: 0 });
    // A redelivered work item whose attempt failed before the provider accepted: started again.
    expect(await repo.startSending([row(id)])).toEqual([true]);
    const evt = newId('event');
    await repo.recordSent([accepted(id, 'Q1', evt)], before('sent'));
    expect(await repo.find(id)).toMatchObject({ status: 'sent', sent_at: new Date('2026-11-22T10:00:00Z'), provider_message_id: 'Q1', attempts: 1, last_error: null });
    expect(await repo.startSending([row(id)])).toEqual([false]);
    const outbox = await sql<{ id: string; subject: string | null }>`select id, subject from outbox where id = ${evt}`.execute(db);
    expect(outbox.rows).toEqual([{ id: evt, subject: null }]);
  });

  it('starts and records several sends in one statement each, answering for each in order', async () => {
    const [a, b, c] = [newId('message'), newId('message'), newId('message')];
    expect(await repo.startSending([row(a)])).toEqual([true]);
    await repo.recordSent([accepted(a, 'Qa', newId('event'))], before('sent'));
    // a was handed over already; b and c start.
    expect(await repo.startSending([row(b), row(a), row(c)])).toEqual([true, false, true]);
    const [eb, ec] = [newId('event'), newId('event')];
    // b's hand-over was traced (its span's traceparent kept for the reports about it), c's not.
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    // b's message.sent row too, written in the work item's trace (the relay publishes it there).
    const handled = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
    const bSent = accepted(b, 'Qb', eb);
    await repo.recordSent([{ ...bSent, traceparent, event: { ...bSent.event, traceparent: handled } }, accepted(c, 'Qc', ec)], before('sent'));
    expect([await repo.find(b), await repo.find(c)]).toMatchObject([
      { status: 'sent', provider_message_id: 'Qb', attempts: 1, traceparent },
      { status: 'sent', provider_message_id: 'Qc', attempts: 1, traceparent: null },
    ]);
    const rows = (await sql<{ id: string; traceparent: string | null }>`select id, traceparent from outbox where id in (${eb}, ${ec})`.execute(db)).rows;
    expect(Object.fromEntries(rows.map((r) => [r.id, r.traceparent]))).toEqual({ [eb]: handled, [ec]: null });
  });

  it('records an acceptance that a report overtook without moving the status back, and still writes message.sent', async () => {
    const id = newId('message');
    await repo.startSending([row(id)]);
    expect(await repo.advance(id, before('delivered'), { status: 'delivered' })).toBe(true);
    const evt = newId('event');
    await repo.recordSent([accepted(id, 'Q2', evt)], before('sent'));
    expect(await repo.find(id)).toMatchObject({ status: 'delivered', provider_message_id: 'Q2', attempts: 1 });
    expect((await sql`select 1 from outbox where id = ${evt}`.execute(db)).rows).toHaveLength(1);
  });
});
