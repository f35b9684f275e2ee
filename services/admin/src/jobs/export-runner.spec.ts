import { ManualClock, createLogger } from '@mailroom/platform';
import type { ExportProgress, ExportRow } from '../repo/export.repository';
import type { ArchiveWriter, Archives } from '../domain/export-ports';
import { ExportRunner } from './export-runner';

const log = createLogger({ service: 'test', level: 'silent' });

function row(id: string): ExportRow {
  const at = new Date('2026-11-26T10:00:00.000Z');
  return { id, org_id: 'org_01jzzzzzzzzzzzzzzzzzzzzzzz', status: 'queued', created_by: null, created_at: at, started_at: null, finished_at: null, expires_at: null, heartbeat_at: at, size_bytes: null, resources_done: 0, resources_total: 14, current_resource: null, records: 0, files: 0, bytes: 0, error: null };
}

function setUp(run: (signal: AbortSignal, report: (p: ExportProgress) => Promise<void>) => Promise<ExportProgress>, recorded = true) {
  const ends: Record<string, { status: string; error: string | null; size_bytes: number | null }> = {};
  const deleted: string[] = [];
  const aborted: string[] = [];
  const repo = {
    markRunning: async () => true,
    saveProgress: async () => {},
    heartbeat: async () => {},
    finish: async (id: string, end: { status: 'completed' | 'failed'; error: string | null; size_bytes: number | null }) => ((ends[id] = end), recorded),
  };
  const archives: Archives = {
    create: (name): ArchiveWriter => ({ bytes: 0, add: async () => {}, finish: async () => 42, abort: () => void aborted.push(name) }),
    delete: async (name) => void deleted.push(name),
  };
  const runner = new ExportRunner(repo, { run: (_r, _a, report, signal) => run(signal, report) }, archives, new ManualClock(), { concurrency: 1, heartbeatMs: 1000 }, log);
  return { runner, ends, deleted, aborted };
}

const progress: ExportProgress = { resources_done: 14, current_resource: null, records: 3, files: 1, bytes: 40 };
const settled = () => new Promise((r) => setTimeout(r, 0));

describe('the export runner', () => {
  it('records a completed export with the archive size', async () => {
    const { runner, ends } = setUp(async () => progress);
    runner.launch(row('exp_a'));
    while (!ends['exp_a']) await settled();
    expect(ends['exp_a']).toMatchObject({ status: 'completed', size_bytes: 42, error: null });
  });

  it('deletes the archive of an export the purge failed meanwhile', async () => {
    const { runner, deleted } = setUp(async () => progress, false);
    runner.launch(row('exp_b'));
    while (deleted.length === 0) await settled();
    expect(deleted).toEqual(['exp_b']);
  });

  it('records a failure with the resource it happened in, and stores nothing', async () => {
    const { runner, ends, aborted } = setUp(async (_s, report) => {
      await report({ ...progress, current_resource: 'mailbox/messages' });
      throw new Error('the mailbox service is unavailable; retry shortly');
    });
    runner.launch(row('exp_c'));
    while (!ends['exp_c']) await settled();
    expect(ends['exp_c']).toMatchObject({ status: 'failed', error: 'mailbox/messages: the mailbox service is unavailable; retry shortly' });
    expect(aborted).toEqual(['exp_c']);
  });

  it('on stop, cuts the running job and fails the waiting ones: none is left running', async () => {
    const { runner, ends } = setUp(
      (signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    );
    runner.launch(row('exp_d'));
    runner.launch(row('exp_e')); // waits: one at a time
    await settled();
    await runner.stop();
    expect(ends['exp_d']).toMatchObject({ status: 'failed', error: expect.stringContaining('stopped') });
    expect(ends['exp_e']).toMatchObject({ status: 'failed', error: expect.stringContaining('stopped') });
  });
});
