/**
 * The webhooks service: endpoints, the dispatcher (signing, retries, auto-disable), delivery records.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/webhooks/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { randomHex } from '@mailroom/contracts';
import { RpcClient, serveRpc } from '@mailroom/messaging';
import { SecretBox } from '@mailroom/platform';
import { DeletedEnvironments, runService, type ServiceModule } from '@mailroom/runtime';
import { inboxesClient } from './clients/inboxes.client';
import { planLimitsClient } from './clients/plan-limits.client';
import { loadConfig, type WebhooksConfig } from './config';
import { startEnvironmentDeletedConsumer } from './consumers/environment-deleted.consumer';
import { streamEventHistory } from './consumers/event-history';
import { runEventsConsumer } from './consumers/events.consumer';
import { Dispatcher } from './delivery/dispatcher';
import { WebhookHttpClient } from './delivery/http-client';
import { Endpoints } from './domain/endpoints';
import { FAILURE_THRESHOLD } from './domain/endpoint-health';
import { RecoveryRunner } from './domain/recoveries';
import { IpPolicy } from './domain/ip-policy';
import { RetryPolicy } from './domain/retry-policy';
import { DeliveryRepository } from './repo/delivery.repository';
import { EndpointRepository } from './repo/endpoint.repository';
import { RecoveryRepository } from './repo/recovery.repository';
import type { WebhooksDb } from './repo/tables';
import { webhooksHandlers } from './rpc/handlers';
import { WebhooksExport } from './domain/export';
import { WebhooksExportRepository } from './repo/export.repository';

/** Requests in flight to one endpoint at once. */
export const PER_ENDPOINT_IN_FLIGHT = 4;

export const webhooksService: ServiceModule<WebhooksConfig, WebhooksDb> = {
  name: 'webhooks',
  // Every statement here is driven by keys and unnest()ed arrays: planning the record and the
  // fan-out for each batch's values cost PostgreSQL about a fifth of their time and chose the
  // same plans (bench:webhooks).
  database: { schema: 'webhooks', migrationsDir: path.join(__dirname, '..', 'migrations'), genericPlans: true },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const ips = new IpPolicy(config.allowedCidrs);
    if (config.allowedCidrs.length) {
      log.warn({ allowed_cidrs: config.allowedCidrs }, 'webhooks may reach these non-public address ranges (WEBHOOK_ALLOWED_CIDRS)');
    } else {
      log.info('webhooks reach public addresses only (WEBHOOK_ALLOWED_CIDRS is empty)');
    }
    const retries = new RetryPolicy(config.retrySchedule);
    const box = new SecretBox(config.SECRETS_ENCRYPTION_KEY);
    const deliveries = new DeliveryRepository(db);
    const http = life.add('webhooks:http', new WebhookHttpClient({ ips, timeoutMs: config.WEBHOOK_TIMEOUT_MS }), (h) => h.close());
    const owner = `${hostname()}:${process.pid}:${randomHex(4)}`;
    const dispatcher = new Dispatcher(deliveries, http, box, retries, clock, log.child({ component: 'dispatcher' }), {
      owner,
      maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
      perEndpoint: PER_ENDPOINT_IN_FLIGHT,
      leaseMs: config.WEBHOOK_LEASE_SECONDS * 1000,
      pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
      shutdownGraceMs: config.WEBHOOK_SHUTDOWN_GRACE_MS,
      failureThreshold: FAILURE_THRESHOLD,
    });
    life.add('webhooks:dispatcher', dispatcher, (d) => d.stop());
    const wake = () => dispatcher.wake();
    const endpointRepo = new EndpointRepository(db);
    const recoveries = new RecoveryRepository(db);
    const transact = transactor(db);
    const runner = new RecoveryRunner({
      transact,
      recoveries,
      endpoints: endpointRepo,
      deliveries,
      history: streamEventHistory(bus),
      clock,
      log: log.child({ component: 'recoveries' }),
      wake,
      owner,
      maxAttempts: retries.maxAttempts,
      pollIntervalMs: Math.max(config.WEBHOOK_POLL_INTERVAL_MS, 1_000),
    });
    const endpoints = new Endpoints({
      transact,
      endpoints: endpointRepo,
      deliveries,
      deleted: new DeletedEnvironments<WebhooksDb>(),
      box,
      clock,
      urls: { allowHttp: config.MAILROOM_ENV !== 'production', ips },
      retries,
      maxEndpoints: config.WEBHOOK_MAX_ENDPOINTS,
      plans: planLimitsClient(new RpcClient(bus, { timeoutMs: 5_000 })),
      inboxes: inboxesClient(new RpcClient(bus, { timeoutMs: 5_000 })),
      recoveries,
      runRecoveries: () => runner.kick(),
      wake,
      changed: (id, now) => dispatcher.endpointChanged(id, now),
    });
    // The dispatcher's lease row first: nothing (a redelivery, a recovery) wakes it before it has one.
    await dispatcher.start();
    // Stopped before the dispatcher (added after it): a run's last deliveries are queued while the dispatcher still runs.
    life.add('webhooks:recoveries', runner, (r) => r.stop());
    runner.start();
    life.add('webhooks:rpc', serveRpc(bus, 'webhooks', webhooksHandlers(endpoints, new WebhooksExport(new WebhooksExportRepository(db)))), (s) => s.stop());
    life.add(
      'webhooks:consumer',
      await runEventsConsumer(bus, { deliveries, clock, maxAttempts: retries.maxAttempts, dispatcher, concurrency: 256 }),
      (c) => c.stop(),
    );
    life.add('webhooks:environment-deleted', await startEnvironmentDeletedConsumer(bus, endpoints), (c) => c.stop());
  },
};

if (require.main === module) void runService(webhooksService, process.env);
