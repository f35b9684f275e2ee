import { newId, type AuditEntry, type AuditedCall } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { refusalOf } from '@mailroom/testing';
import type { ExportRepository, ExportRow } from '../repo/export.repository';
import { EXPORT_PLAN } from './export-job';
import { Exports, toOrgExport } from './exports';

const DAY = 86_400_000;

/** The repository's rules over an array: one queued or running export per organization. */
class MemoryExports implements Pick<ExportRepository, keyof ExportRepository> {
  rows: ExportRow[] = [];
  async insert(row: Pick<ExportRow, 'id' | 'org_id' | 'created_by' | 'created_at' | 'heartbeat_at' | 'resources_total'>) {
    if (this.rows.some((r) => r.org_id === row.org_id && (r.status === 'queued' || r.status === 'running'))) return undefined;
    const full: ExportRow = { ...row, status: 'queued', started_at: null, finished_at: null, expires_at: null, size_bytes: null, resources_done: 0, current_resource: null, records: 0, files: 0, bytes: 0, error: null };
    this.rows.push(full);
    return full;
  }
  async findActive(orgId: string) {
    return this.rows.find((r) => r.org_id === orgId && (r.status === 'queued' || r.status === 'running'));
  }
  async find(id: string) {
    return this.rows.find((r) => r.id === id);
  }
  async list(limit: number, before: string | undefined) {
    return this.rows.filter((r) => !before || r.id < before).sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit);
  }
  async markRunning() {
    return true;
  }
  async saveProgress() {}
  async heartbeat() {}
  async finish(id: string, end: { status: 'completed' | 'failed'; finished_at: Date; expires_at: Date; size_bytes: number | null; error: string | null }) {
    const row = this.rows.find((r) => r.id === id && (r.status === 'queued' || r.status === 'running'));
    if (row) Object.assign(row, end);
    return row !== undefined;
  }
  async failStale(before: Date, now: Date, expiresAt: Date, error: string) {
    const stale = this.rows.filter((r) => (r.status === 'queued' || r.status === 'running') && r.heartbeat_at < before);
    for (const r of stale) Object.assign(r, { status: 'failed', finished_at: now, expires_at: expiresAt, error });
    return stale.map((r) => r.id);
  }
  async due(now: Date) {
    return this.rows.filter((r) => (r.status === 'completed' || r.status === 'failed') && r.expires_at! <= now);
  }
  async markExpired(id: string) {
    this.rows.find((r) => r.id === id)!.status = 'expired';
  }
}

const OPERATOR: AuditedCall = { auth: { kind: 'admin', admin_key_id: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz' }, requestId: 'req_1' };
const audited: AuditEntry[] = [];
const trail = { transact: async <T>(work: (tx: never) => Promise<T>) => work(undefined as never), audit: { record: async (entry: AuditEntry) => void audited.push(entry) } };

function setUp() {
  const clock = new ManualClock(new Date('2026-11-26T10:00:00.000Z'));
  const repo = new MemoryExports();
  const orgId = newId('organization');
  const launched: string[] = [];
  const deleted: string[] = [];
  const exports = new Exports(repo, { exists: async (id) => id === orgId }, { delete: async (name) => void deleted.push(name) }, { launch: (row) => void launched.push(row.id) }, clock, trail);
  audited.length = 0;
  return { clock, repo, orgId, launched, deleted, exports, audited };
}

describe('organization exports', () => {
  it('start queued, launched at once, with every resource of the plan to do', async () => {
    const { exports, orgId, launched, audited } = setUp();
    const started = await exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', orgId, OPERATOR);
    expect(audited).toEqual([expect.objectContaining({ action: 'export.started', actor: { type: 'admin_key', id: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz' }, org_id: orgId, target: { type: 'export', id: started.id }, request_id: 'req_1' })]);
    expect(started).toMatchObject({ org_id: orgId, status: 'queued', created_by: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz', download_url: null, size_bytes: null, expires_at: null });
    expect(started.progress).toEqual({ resources_done: 0, resources_total: EXPORT_PLAN.length, current_resource: null, records: 0, files: 0, bytes: 0 });
    expect(launched).toEqual([started.id]);
  });

  it('refuse a missing organization (404) and a second export while one runs (409 naming it)', async () => {
    const { exports, orgId, launched } = setUp();
    expect((await refusalOf(exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', newId('organization'), OPERATOR))).status).toBe(404);
    const first = await exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', orgId, OPERATOR);
    const refused = await refusalOf(exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', orgId, OPERATOR));
    expect(refused.status).toBe(409);
    expect(refused.message).toContain(first.id);
    expect(launched).toEqual([first.id]);
  });

  it('download only once completed: 409 before and after a failure, 410 once expired, 404 unknown', async () => {
    const { exports, repo, orgId, clock } = setUp();
    const started = await exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', orgId, OPERATOR);
    expect((await refusalOf(exports.download(started.id, OPERATOR))).status).toBe(409);
    await repo.finish(started.id, { status: 'completed', finished_at: clock.now(), expires_at: new Date(clock.now().getTime() + 7 * DAY), size_bytes: 1234, error: null });
    expect(await exports.download(started.id, OPERATOR)).toEqual({ bucket: 'exports', object: started.id, content_type: 'application/zip', filename: `${orgId}-${started.id}.zip`, size: 1234 });
    expect((await exports.get(started.id)).download_url).toBe(`/api/v1/admin/exports/${started.id}/download`);
    await repo.markExpired(started.id);
    expect((await refusalOf(exports.download(started.id, OPERATOR))).status).toBe(410);
    expect((await refusalOf(exports.download(newId('export'), OPERATOR))).status).toBe(404);
  });

  it('are deleted 7 days after they finish, and failed when their heartbeat stopped (their instance died)', async () => {
    const { exports, repo, orgId, clock, deleted } = setUp();
    const done = await exports.start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', orgId, OPERATOR);
    await repo.finish(done.id, { status: 'completed', finished_at: clock.now(), expires_at: new Date(clock.now().getTime() + 7 * DAY), size_bytes: 10, error: null });
    const other = setUp().orgId;
    const stuck = await new Exports(repo, { exists: async () => true }, { delete: async (n) => void deleted.push(n) }, { launch: () => {} }, clock, trail).start('adk_01jzzzzzzzzzzzzzzzzzzzzzzz', other, OPERATOR);

    clock.advance(60_000);
    expect(await exports.sweep(120_000)).toEqual({ interrupted: [], expired: 0 });
    clock.advance(61_000);
    expect(await exports.sweep(120_000)).toEqual({ interrupted: [stuck.id], expired: 0 });
    expect(await exports.get(stuck.id)).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });

    clock.set(new Date(new Date('2026-11-26T10:00:00.000Z').getTime() + 7 * DAY - 1));
    expect((await exports.sweep(120_000)).expired).toBe(0);
    clock.advance(1);
    expect((await exports.sweep(120_000)).expired).toBe(1);
    expect((await exports.get(done.id)).status).toBe('expired');
    expect(deleted).toContain(done.id);
  });

  it('show size and download link only when completed', () => {
    const row = { id: newId('export'), org_id: newId('organization'), status: 'failed', created_by: null, created_at: new Date(), started_at: null, finished_at: new Date(), expires_at: new Date(), heartbeat_at: new Date(), size_bytes: 5, resources_done: 1, resources_total: 14, current_resource: null, records: 0, files: 0, bytes: 0, error: 'x' } as const;
    expect(toOrgExport(row)).toMatchObject({ size_bytes: null, download_url: null, error: 'x' });
  });
});
