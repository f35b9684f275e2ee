/**
 * Organization exports wired (issue 28, part 4): the buckets they read and write, the other
 * services' rows over NATS, the runner of the jobs and the purge, stopped in that order
 * (the purge first, then the jobs, which record themselves failed).
 */
import { transactor } from '@mailroom/db';
import { RpcClient, openBucket } from '@mailroom/messaging';
import type { ServiceDeps } from '@mailroom/runtime';
import { exportSourcesClient, organizationsClient, storedFiles } from './clients/export-sources.client';
import { zipArchives } from './clients/zip-archive.client';
import type { AdminConfig } from './config';
import { ExportJob } from './domain/export-job';
import type { AuditLog } from './domain/audit-log';
import { Exports } from './domain/exports';
import { ExportRunner } from './jobs/export-runner';
import { ExportSweepJob } from './jobs/export-sweep.job';
import { ExportRepository } from './repo/export.repository';
import type { AdminDb } from './repo/tables';

export async function startExports({ config, bus, db, life, clock, log }: ServiceDeps<AdminConfig, AdminDb>, audit: Pick<AuditLog, 'record'>): Promise<Exports> {
  const [raw, received, sent, attachments, exportBucket] = await Promise.all([
    openBucket(bus, 'raw'),
    openBucket(bus, 'received'),
    openBucket(bus, 'sent'),
    openBucket(bus, 'attachments'),
    openBucket(bus, 'exports'),
  ]);
  const rpc = new RpcClient(bus, { timeoutMs: 30_000 });
  const repo = new ExportRepository(db);
  const archives = zipArchives(exportBucket);
  const staleMs = config.EXPORT_STALE_AFTER_SECONDS * 1000;
  const job = new ExportJob(exportSourcesClient(rpc, config.EXPORT_PAGE_SIZE), storedFiles({ raw, received, sent, attachments }));
  const runner = new ExportRunner(repo, job, archives, clock, { concurrency: config.EXPORT_CONCURRENCY, heartbeatMs: Math.floor(staleMs / 4) }, log.child({ component: 'exports' }));
  life.add('admin:export-runner', runner, (r) => r.stop()).start();
  const exports = new Exports(repo, organizationsClient(rpc), archives, runner, clock, { transact: transactor(db), audit });
  life.add('admin:export-sweep', new ExportSweepJob(exports, config.EXPORT_SWEEP_INTERVAL_SECONDS * 1000, staleMs, log.child({ component: 'exports' })), (j) => j.stop()).start();
  return exports;
}
