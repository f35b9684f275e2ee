/**
 * The admin service: the platform operator's surface (issue 28). Admin keys (hashed, shown
 * once, revocable, optionally expiring) and their verification for the gateway; the first key
 * comes from the command (cli.ts). The platform's health, its history and alerts: health.module.ts.
 *
 * The composition root: configuration, repositories, domain and handlers are wired in `start`
 * below. `node services/admin/dist/main.js` runs it alone (libs/runtime gives it its logger,
 * database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { serveRpc } from '@mailroom/messaging';
import { runService, type ServiceModule } from '@mailroom/runtime';
import { loadConfig, type AdminConfig } from './config';
import { AdminKeys } from './domain/admin-keys';
import { AdminKeyRepository } from './repo/admin-key.repository';
import { startHealth } from './health.module';
import type { AdminDb } from './repo/tables';
import { adminHandlers } from './rpc/handlers';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export const adminService: ServiceModule<AdminConfig, AdminDb> = {
  name: 'admin',
  database: { schema: 'admin', migrationsDir: MIGRATIONS_DIR },
  loadConfig,
  async start({ config, bus, db, life, log, clock }) {
    const keys = new AdminKeys(new AdminKeyRepository(db), clock);
    const health = await startHealth({ config, bus, db, life, log, clock });
    life.add('admin:rpc', serveRpc(bus, 'admin', adminHandlers(keys, health)), (s) => s.stop());
  },
};

if (require.main === module) void runService(adminService, process.env);
