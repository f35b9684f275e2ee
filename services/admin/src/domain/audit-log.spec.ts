import { auditEntryOf, type AuditEntry } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { AuditLogFilter, AuditLogRepository, AuditLogRow, NewAuditLogRow } from '../repo/audit-log.repository';
import { AuditLog, believable, retainedSince } from './audit-log';

class MemoryLog implements Pick<AuditLogRepository, keyof AuditLogRepository> {
  rows: AuditLogRow[] = [];
  async insert(row: NewAuditLogRow) {
    if (this.rows.some((r) => r.id === row.id)) return false;
    this.rows.push({ ...row, details: JSON.parse(row.details) as AuditLogRow['details'] });
    return true;
  }
  async list(f: AuditLogFilter, limit: number, before: string | undefined) {
    return this.rows
      .filter((r) => (!f.org_id || r.org_id === f.org_id) && (!f.action || r.action === f.action) && (!before || r.id < before))
      .sort((a, b) => (a.id < b.id ? 1 : -1))
      .slice(0, limit);
  }
  async deleteBefore(at: Date) {
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => r.at.getTime() >= at.getTime());
    return before - this.rows.length;
  }
}

const ada = { auth: { kind: 'user' as const, user_id: 'usr_01jzzzzzzzzzzzzzzzzzzzzzzz', session_id: 'ses_01jzzzzzzzzzzzzzzzzzzzzzzz', org_id: 'org_01jzzzzzzzzzzzzzzzzzzzzzzz', env_id: 'env_01jzzzzzzzzzzzzzzzzzzzzzzz', role: 'owner' as const } };

function entry(at: Date, action: AuditEntry['action'] = 'api_key.created'): AuditEntry {
  return auditEntryOf(ada, at, { action, org_id: ada.auth.org_id, target: { type: 'api_key', id: 'key_01jzzzzzzzzzzzzzzzzzzzzzzz' } });
}

describe('the audit log', () => {
  it('believes an entry only from the service that does its action', () => {
    const e = entry(new Date());
    expect(believable('auth', e)).toBe(true);
    expect(believable('orgs', e)).toBe(false);
    expect(believable('domains', { action: 'domain.deleted' })).toBe(true);
    expect(believable('auth', { action: 'domain.deleted' })).toBe(false);
  });

  it('stores an entry once, refuses one from the wrong service, and lists newest first with filters and pages', async () => {
    const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
    const repo = new MemoryLog();
    const log = new AuditLog(repo, clock);
    // Ids are time-ordered by when they were made: two made in one millisecond are given apart here.
    const a = { ...entry(clock.now()), id: 'aud_01m8bz6dsv0000000000000001' };
    clock.advance(1_000);
    const b = { ...entry(clock.now(), 'api_key.revoked'), id: 'aud_01m8bz6dsv0000000000000002' };
    expect(await log.received('auth', a)).toBe('stored');
    expect(await log.received('auth', a)).toBe('repeated');
    expect(await log.received('orgs', b)).toBe('refused');
    expect(await log.received('auth', b)).toBe('stored');
    const first = await log.list({ limit: 1 });
    expect(first.data.map((e) => e.id)).toEqual([b.id]);
    const second = await log.list({ limit: 1, page_token: first.next_page_token! });
    expect(second).toEqual({ data: [a], next_page_token: null });
    expect((await log.list({ limit: 10, action: 'api_key.created' })).data).toEqual([a]);
    await expect(log.list({ limit: 10, from: '2026-11-26T10:00:00Z', to: '2026-11-26T10:00:00Z' })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('keeps a year: the purge deletes what is older, and nothing younger', async () => {
    const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
    const repo = new MemoryLog();
    const log = new AuditLog(repo, clock);
    const old = entry(new Date(retainedSince(clock.now()).getTime() - 1));
    const kept = entry(retainedSince(clock.now()));
    await log.received('auth', old);
    await log.received('auth', kept);
    expect(await log.purge()).toBe(1);
    expect(repo.rows.map((r) => r.id)).toEqual([kept.id]);
  });
});
