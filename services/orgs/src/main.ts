/**
 * The orgs service: organizations, members and roles, environments.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/orgs/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { serveRpc } from '@mailroom/messaging';
import { runService, type ServiceModule } from '@mailroom/runtime';
import { loadConfig, type OrgsConfig } from './config';
import { Organizations } from './domain/organizations';
import { OrganizationRepository } from './repo/organization.repository';
import type { OrgsDb } from './repo/tables';
import { orgsHandlers } from './rpc/handlers';

export const orgsService: ServiceModule<OrgsConfig, OrgsDb> = {
  name: 'orgs',
  database: { schema: 'orgs', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ bus, db, life, clock }) {
    const organizations = new Organizations(transactor(db), new OrganizationRepository(db), clock);
    life.add('orgs:rpc', serveRpc(bus, 'orgs', orgsHandlers(organizations)), (s) => s.stop());
  },
};

if (require.main === module) void runService(orgsService, process.env);
