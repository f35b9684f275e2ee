import { ADMIN_KEY_PATTERN, type AuditEntry, type AuditedCall } from '@mailroom/contracts';
import { ManualClock, sha256 } from '@mailroom/platform';
import { refusalOf } from '@mailroom/testing';
import type { AdminKeyRepository, AdminKeyRow } from '../repo/admin-key.repository';
import { actsAt, AdminKeys, COMMAND_CALL, newAdminKeySecret } from './admin-keys';

class MemoryKeys implements Pick<AdminKeyRepository, keyof AdminKeyRepository> {
  rows: AdminKeyRow[] = [];
  async insert(row: Omit<AdminKeyRow, 'last_used_at' | 'revoked_at'>) {
    this.rows.push({ ...row, last_used_at: null, revoked_at: null });
  }
  async findByHash(hash: string) {
    return this.rows.find((r) => r.key_hash === hash);
  }
  async find(id: string) {
    return this.rows.find((r) => r.id === id);
  }
  async list(limit: number, before: string | undefined) {
    return this.rows.filter((r) => !before || r.id < before).sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit);
  }
  async revoke(id: string, at: Date) {
    const row = this.rows.find((r) => r.id === id && r.revoked_at === null);
    if (row) row.revoked_at = at;
    return row;
  }
  async touch(id: string, at: Date) {
    const row = this.rows.find((r) => r.id === id)!;
    if (!row.last_used_at || row.last_used_at.getTime() < at.getTime() - 60_000) row.last_used_at = at;
  }
}

function setUp() {
  const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
  const repo = new MemoryKeys();
  const audited: AuditEntry[] = [];
  const audit = { record: async (entry: AuditEntry) => void audited.push(entry) };
  return { clock, repo, audited, keys: new AdminKeys(async (work) => work(undefined as never), repo, audit, clock) };
}

const operator = (admin_key_id: string): AuditedCall => ({ auth: { kind: 'admin', admin_key_id }, requestId: 'req_1', client: { ip: '192.0.2.7' } });

describe('admin keys', () => {
  it('are mra_ and 43 base62 characters, stored as their SHA-256 only', async () => {
    expect(newAdminKeySecret()).toMatch(ADMIN_KEY_PATTERN);
    const { repo, keys } = setUp();
    const made = await keys.create(null, { name: 'first' }, COMMAND_CALL);
    expect(made.key).toMatch(ADMIN_KEY_PATTERN);
    expect(made).toMatchObject({ name: 'first', key_prefix: made.key.slice(0, 8), created_by: null, expires_at: null, revoked_at: null });
    expect(repo.rows[0]!.key_hash).toBe(sha256(made.key).toString('base64url'));
    expect(JSON.stringify(repo.rows)).not.toContain(made.key);
    expect(await keys.get(made.id)).not.toHaveProperty('key');
  });

  it('act until revoked or expired, and every refusal is the same 401', async () => {
    const { clock, keys } = setUp();
    const lasting = await keys.create(null, { name: 'lasting' }, COMMAND_CALL);
    const brief = await keys.create(lasting.id, { name: 'brief', expires_at: '2026-11-26T11:00:00.000Z' }, operator(lasting.id));
    expect(brief.created_by).toBe(lasting.id);
    expect(await keys.verify(brief.key)).toEqual({ admin_key_id: brief.id });
    clock.advance(3_600_000);
    const expired = await refusalOf(keys.verify(brief.key));
    expect(await keys.verify(lasting.key)).toEqual({ admin_key_id: lasting.id });
    await keys.revoke(lasting.id, operator(lasting.id));
    const revoked = await refusalOf(keys.verify(lasting.key));
    const unknown = await refusalOf(keys.verify(newAdminKeySecret()));
    const malformed = await refusalOf(keys.verify('mr_not-an-admin-key'));
    for (const r of [expired, revoked, unknown, malformed]) expect({ code: r.code, message: r.message }).toEqual({ code: 'unauthorized', message: 'admin key is invalid, revoked or expired' });
  });

  it('record their last use to the minute, keep the first revocation time, and refuse an expiry in the past', async () => {
    const { clock, keys } = setUp();
    const k = await keys.create(null, { name: 'k' }, COMMAND_CALL);
    await keys.verify(k.key);
    const first = (await keys.get(k.id)).last_used_at;
    clock.advance(30_000);
    await keys.verify(k.key);
    expect((await keys.get(k.id)).last_used_at).toBe(first);
    clock.advance(31_000);
    await keys.verify(k.key);
    expect((await keys.get(k.id)).last_used_at).not.toBe(first);
    await keys.revoke(k.id, COMMAND_CALL);
    const at = (await keys.get(k.id)).revoked_at;
    clock.advance(1_000);
    await keys.revoke(k.id, COMMAND_CALL);
    expect((await keys.get(k.id)).revoked_at).toBe(at);
    await expect(keys.revoke('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', COMMAND_CALL)).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.create(null, { name: 'late', expires_at: clock.now().toISOString() }, COMMAND_CALL)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('are audited: who made or revoked which key, from where; a second revocation says nothing', async () => {
    const { keys, audited } = setUp();
    const first = await keys.create(null, { name: 'first' }, COMMAND_CALL);
    const second = await keys.create(first.id, { name: 'second' }, operator(first.id));
    await keys.revoke(second.id, operator(first.id));
    await keys.revoke(second.id, operator(first.id));
    expect(audited.map((e) => [e.action, e.actor, e.target.id, e.request_id, e.ip])).toEqual([
      ['admin_key.created', { type: 'command', id: null }, first.id, null, null],
      ['admin_key.created', { type: 'admin_key', id: first.id }, second.id, 'req_1', '192.0.2.7'],
      ['admin_key.revoked', { type: 'admin_key', id: first.id }, second.id, 'req_1', '192.0.2.7'],
    ]);
    expect(JSON.stringify(audited)).not.toContain(second.key);
  });

  it('actsAt: not revoked, expiry ahead', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    expect(actsAt({ revoked_at: null, expires_at: null }, now)).toBe(true);
    expect(actsAt({ revoked_at: null, expires_at: now }, now)).toBe(false);
    expect(actsAt({ revoked_at: now, expires_at: null }, now)).toBe(false);
  });
});
