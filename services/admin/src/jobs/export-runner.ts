/**
 * Runs the export jobs this instance started, a few at a time (the others wait queued), and
 * renews the heartbeat of every one it holds, so the purge (Exports.sweep) fails only those
 * whose instance died. On stop, running jobs are cut between pages and marked failed, and
 * waiting ones too: an export is never left running for ever, and never half-stored (a
 * partial archive is not an object of the bucket).
 */
import type { Clock, Logger } from '@mailroom/platform';
import type { ExportProgress, ExportRepository, ExportRow } from '../repo/export.repository';
import type { Archives } from '../domain/export-ports';
import type { ExportJob } from '../domain/export-job';
import { expiresAfter, type ExportLauncher } from '../domain/exports';

const SHUTDOWN_REASON = 'interrupted: the admin service was stopped; start a new export';

export interface ExportRunnerOptions {
  concurrency: number;
  heartbeatMs: number;
}

export class ExportRunner implements ExportLauncher {
  private readonly held = new Map<string, AbortController>();
  private readonly waiting: ExportRow[] = [];
  private readonly active = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly repo: Pick<ExportRepository, 'markRunning' | 'saveProgress' | 'heartbeat' | 'finish'>,
    private readonly job: Pick<ExportJob, 'run'>,
    private readonly archives: Archives,
    private readonly clock: Clock,
    private readonly opts: ExportRunnerOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.repo.heartbeat([...this.held.keys()], this.clock.now()).catch((err: unknown) => this.log.warn({ err }, 'export heartbeat failed; the next one tries again'));
    }, this.opts.heartbeatMs).unref();
  }

  launch(row: ExportRow): void {
    if (this.stopped) return; // the purge fails it once its heartbeat is old
    this.held.set(row.id, new AbortController());
    this.waiting.push(row);
    this.next();
  }

  /** Cuts running jobs and fails waiting ones; resolves when all are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const ctl of this.held.values()) ctl.abort(new Error(SHUTDOWN_REASON));
    const waiting = this.waiting.splice(0);
    await Promise.allSettled([...this.active, ...waiting.map((row) => this.fail(row.id, SHUTDOWN_REASON, undefined))]);
  }

  private next(): void {
    while (this.active.size < this.opts.concurrency && this.waiting.length > 0) {
      const row = this.waiting.shift()!;
      const p = this.execute(row).finally(() => {
        this.active.delete(p);
        this.held.delete(row.id);
        this.next();
      });
      this.active.add(p);
    }
  }

  private async execute(row: ExportRow): Promise<void> {
    const log = this.log.child({ export_id: row.id, org_id: row.org_id });
    const signal = this.held.get(row.id)!.signal;
    let last: ExportProgress | undefined;
    try {
      if (signal.aborted || !(await this.repo.markRunning(row.id, this.clock.now()))) return;
      log.info('export started');
      const archive = this.archives.create(row.id, row.created_at);
      // A stop cuts the entry being written too (a large file would otherwise finish first).
      signal.addEventListener('abort', () => archive.abort(new Error(SHUTDOWN_REASON)), { once: true });
      try {
        last = await this.job.run({ exportId: row.id, orgId: row.org_id, createdAt: row.created_at }, archive, (p) => ((last = p), this.repo.saveProgress(row.id, p, this.clock.now())), signal);
        const size = await archive.finish();
        const at = this.clock.now();
        const recorded = await this.repo.finish(row.id, { status: 'completed', finished_at: at, expires_at: expiresAfter(at), size_bytes: size, error: null, progress: { ...last, bytes: size } });
        // Failed by the purge meanwhile (its heartbeat had stopped): nobody can download it.
        if (!recorded) await this.archives.delete(row.id);
        log.info({ size, records: last.records, files: last.files }, 'export completed');
      } catch (err) {
        archive.abort(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
    } catch (err) {
      const reason = signal.aborted ? SHUTDOWN_REASON : `${last?.current_resource ? `${last.current_resource}: ` : ''}${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
      log.warn({ err }, 'export failed');
      await this.fail(row.id, reason, last).catch((e: unknown) => log.error({ err: e }, 'export failure not recorded; the purge marks it failed'));
    }
  }

  private async fail(id: string, reason: string, progress: ExportProgress | undefined): Promise<void> {
    const at = this.clock.now();
    await this.repo.finish(id, { status: 'failed', finished_at: at, expires_at: expiresAfter(at), size_bytes: null, error: reason, ...(progress ? { progress } : {}) });
  }
}
