/**
 * The domains service: custom domains, the DNS records they need (MX, SPF, DKIM, DMARC, the
 * bounce name), their DKIM key pairs (private keys sealed at rest), the verification job and
 * the zone file; emits `domain.verified`.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/domains/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { randomHex } from '@mailroom/contracts';
import { transactor } from '@mailroom/db';
import { RpcClient, serveRpc } from '@mailroom/messaging';
import { SecretBox } from '@mailroom/platform';
import { DeletedEnvironments, Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { announcements } from './clients/announcements.client';
import { makeDkimKey } from './clients/dkim-keys';
import { createDnsClient } from './clients/dns.client';
import { inboxesClient } from './clients/inboxes.client';
import { planLimitsClient } from './clients/plan-limits.client';
import { loadConfig, type DomainsConfig } from './config';
import { startEnvironmentDeletedConsumer } from './consumers/environment-deleted.consumer';
import { Domains } from './domain/domains';
import { VerificationJob } from './domain/verification-job';
import { DomainRepository } from './repo/domain.repository';
import type { DomainsDb } from './repo/tables';
import { domainsHandlers } from './rpc/handlers';
import { DomainsExport } from './domain/export';
import { DomainsExportRepository } from './repo/export.repository';

/** Domains a round of the job takes and checks at once. */
const JOB_BATCH = 16;

export const domainsService: ServiceModule<DomainsConfig, DomainsDb> = {
  name: 'domains',
  database: { schema: 'domains', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const outbox = life.add('domains:outbox', new Outbox(db, bus, log, { service: 'domains' }), (o) => o.stop());
    outbox.start();
    const box = new SecretBox(config.SECRETS_ENCRYPTION_KEY);
    // Two tries: one lost UDP packet is not a temporary failure.
    const dns = life.add('domains:dns', createDnsClient({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS, tries: 2 }), (d) => d.cancel());
    const repo = new DomainRepository(db);
    const rpc = new RpcClient(bus, { timeoutMs: 5_000 });
    const domains = new Domains({
      transact: transactor(db),
      repo,
      deleted: new DeletedEnvironments<DomainsDb>(),
      plans: planLimitsClient(rpc),
      announce: announcements(outbox),
      inboxes: inboxesClient(rpc),
      dns,
      makeKey: makeDkimKey,
      sealer: { seal: (plaintext, bound) => box.seal(plaintext, bound) },
      clock,
      log: log.child({ component: 'domains' }),
      settings: config.records,
      schedule: config.schedule,
      ownDomain: config.MAIL_DOMAIN,
    });
    life.add('domains:rpc', serveRpc(bus, 'domains', domainsHandlers(domains, new DomainsExport(new DomainsExportRepository(db)))), (s) => s.stop());
    const job = new VerificationJob(domains, repo, clock, log.child({ component: 'verification-job' }), {
      owner: `${hostname()}:${process.pid}:${randomHex(4)}`,
      intervalMs: config.DOMAIN_CHECK_INTERVAL_MS,
      // A check is five lookups at once, each up to two tries of DNS_TIMEOUT_MS (the second doubled): well inside this.
      leaseMs: Math.max(60_000, config.DNS_TIMEOUT_MS * 6),
      batch: JOB_BATCH,
    });
    life.add('domains:verification-job', job, (j) => j.stop());
    job.start();
    life.add('domains:environment-deleted', await startEnvironmentDeletedConsumer(bus, domains), (c) => c.stop());
  },
};

if (require.main === module) void runService(domainsService, process.env);
