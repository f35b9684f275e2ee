/**
 * The orgs service: organizations, members and roles, environments.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/orgs/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { RpcClient, ensureStreams, serveRpc } from '@mailroom/messaging';
import { Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { membershipFacts } from './clients/membership-facts.client';
import { usersClient } from './clients/users.client';
import { loadConfig, type OrgsConfig } from './config';
import { Members } from './domain/members';
import { Organizations } from './domain/organizations';
import { MemberRepository } from './repo/member.repository';
import { OrganizationRepository } from './repo/organization.repository';
import type { OrgsDb } from './repo/tables';
import { orgsHandlers } from './rpc/handlers';

export const orgsService: ServiceModule<OrgsConfig, OrgsDb> = {
  name: 'orgs',
  database: { schema: 'orgs', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ bus, db, life, clock, log }) {
    await ensureStreams(bus, ['ORGS_FACTS']);
    const outbox = life.add('orgs:outbox', new Outbox(db, bus, log), (o) => o.stop());
    outbox.start();
    const transact = transactor(db);
    const organizations = new Organizations(transact, new OrganizationRepository(db), clock);
    const members = new Members(transact, new MemberRepository(db), usersClient(new RpcClient(bus)), membershipFacts(outbox), clock);
    life.add('orgs:rpc', serveRpc(bus, 'orgs', orgsHandlers(organizations, members)), (s) => s.stop());
  },
};

if (require.main === module) void runService(orgsService, process.env);
