/**
 * The orgs service: organizations, members and roles, environments, plans and upgrade requests, usage.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/orgs/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { RpcClient, serveRpc } from '@mailroom/messaging';
import { Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { environmentContents } from './clients/environment-contents.client';
import { environmentFacts } from './clients/environment-facts.client';
import { auditTrail } from './clients/audit-trail.client';
import { membershipFacts } from './clients/membership-facts.client';
import { systemMail } from './clients/system-mail.client';
import { USAGE_OWNER_TIMEOUT_MS, usageOwners } from './clients/usage-owners.client';
import { usersClient } from './clients/users.client';
import { loadConfig, type OrgsConfig } from './config';
import { Departures } from './domain/departures';
import { SsoMembers } from './domain/sso-members';
import { Environments } from './domain/environments';
import { Invitations, type NewMember } from './domain/invitations';
import { Members } from './domain/members';
import { PlanGuard } from './domain/plan-guard';
import { Organizations } from './domain/organizations';
import { DepartureRepository } from './repo/departure.repository';
import { EnvironmentRepository } from './repo/environment.repository';
import { OwnershipTransfers } from './domain/ownership-transfers';
import { Usage } from './domain/usage';
import { UpgradeRequests } from './domain/upgrade-requests';
import { InvitationRepository } from './repo/invitation.repository';
import { MemberRepository } from './repo/member.repository';
import { OrganizationRepository } from './repo/organization.repository';
import { OwnershipTransferRepository } from './repo/ownership-transfer.repository';
import { UpgradeRequestRepository } from './repo/upgrade-request.repository';
import type { OrgsDb, OrgsTx } from './repo/tables';
import { UsageRepository } from './repo/usage.repository';
import { orgsHandlers } from './rpc/handlers';
import { OrgsExport } from './domain/export';
import { OrgsExportRepository } from './repo/export.repository';

export const orgsService: ServiceModule<OrgsConfig, OrgsDb> = {
  name: 'orgs',
  database: { schema: 'orgs', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const outbox = life.add('orgs:outbox', new Outbox(db, bus, log, { service: 'orgs' }), (o) => o.stop());
    outbox.start();
    const transact = transactor(db);
    const orgRepo = new OrganizationRepository(db);
    const organizations = new Organizations(transact, orgRepo, config.plans, clock);
    const rpc = new RpcClient(bus);
    const memberRepo = new MemberRepository(db);
    const users = usersClient(rpc);
    const facts = membershipFacts(outbox);
    const audit = auditTrail(outbox);
    const members = new Members(transact, memberRepo, users, facts, clock, audit);
    const plan = new PlanGuard(config.plans, (orgId, tx) => orgRepo.lockPlan(orgId, tx));
    const environments = new Environments(transact, new EnvironmentRepository(db), memberRepo, users, environmentContents(rpc), environmentFacts(outbox), plan, clock);
    const orgName = async (tx: OrgsTx, orgId: string) => (await orgRepo.findById(orgId, tx))?.name;
    const transfers = new OwnershipTransfers(transact, new OwnershipTransferRepository(db), memberRepo, users, orgName, facts, systemMail(outbox), clock, audit);
    const addMember = (tx: OrgsTx, m: NewMember) => orgRepo.insertMember(m, tx);
    const invitations = new Invitations(transact, new InvitationRepository(db), memberRepo, addMember, users, orgName, facts, systemMail(outbox), plan, clock);
    const usage = new Usage(new UsageRepository(db), usageOwners(new RpcClient(bus, { timeoutMs: USAGE_OWNER_TIMEOUT_MS })), config.plans, clock);
    const upgrades = new UpgradeRequests(transact, new UpgradeRequestRepository(db), orgRepo, memberRepo, clock, audit);
    // A person's deleted account: what they own, and their purge (auth asks).
    // Members made by single sign-on (auth asks).
    const ssoMembers = new SsoMembers(transact, memberRepo, addMember, (userId) => organizations.membershipsOf(userId), facts, plan, clock);
    const departures = new Departures(transact, new DepartureRepository(db), memberRepo, facts, environmentFacts(outbox), clock);
    life.add('orgs:rpc', serveRpc(bus, 'orgs', orgsHandlers({ orgs: organizations, members, environments, transfers, invitations, upgrades, usage, departures, ssoMembers, exportRows: new OrgsExport(new OrgsExportRepository(db)) })), (s) => s.stop());
  },
};

if (require.main === module) void runService(orgsService, process.env);
