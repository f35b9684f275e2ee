/**
 * The admin service: the platform operator's surface (issue 28). Admin keys (hashed, shown
 * once, revocable, optionally expiring) and their verification for the gateway; the first key
 * comes from the command (cli.ts). Organization exports: exports.module.ts. The platform's
 * health, its history and alerts: health.module.ts.
 *
 * The composition root: configuration, repositories, domain and handlers are wired in `start`
 * below. `node services/admin/dist/main.js` runs it alone (libs/runtime gives it its logger,
 * database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { serveRpc } from '@mailroom/messaging';
import { Rounds } from '@mailroom/platform';
import { runService, type ServiceModule } from '@mailroom/runtime';
import { loadConfig, type AdminConfig } from './config';
import { runAuditConsumer } from './consumers/audit.consumer';
import { AdminKeys } from './domain/admin-keys';
import { AuditLog } from './domain/audit-log';
import { AdminKeyRepository } from './repo/admin-key.repository';
import { AuditLogRepository } from './repo/audit-log.repository';
import { startHealth } from './health.module';
import type { AdminDb } from './repo/tables';
import { adminHandlers } from './rpc/handlers';
import { startExports } from './exports.module';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export const adminService: ServiceModule<AdminConfig, AdminDb> = {
  name: 'admin',
  database: { schema: 'admin', migrationsDir: MIGRATIONS_DIR },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const audit = new AuditLog(new AuditLogRepository(db), clock);
    const keys = new AdminKeys(transactor(db), new AdminKeyRepository(db), audit, clock);
    const exports = await startExports({ config, bus, db, life, clock, log }, audit);
    const health = await startHealth({ config, bus, db, life, log, clock }, audit);
    life.add('admin:rpc', serveRpc(bus, 'admin', adminHandlers(keys, audit, exports, health)), (s) => s.stop());
    life.add('admin:audit', await runAuditConsumer(bus, audit), (c) => c.stop());
    const purgeLog = log.child({ component: 'audit-purge' });
    const purge = new Rounds(
      async () => {
        const purged = await audit.purge();
        if (purged) purgeLog.info({ purged }, 'deleted audit entries older than a year');
        return false;
      },
      (err) => purgeLog.warn({ err }, 'purging old audit entries failed; next round tries again'),
      config.AUDIT_PURGE_INTERVAL_MS,
    );
    life.add('admin:audit-purge', purge, (p) => p.stop());
    purge.start();
  },
};

if (require.main === module) void runService(adminService, process.env);
