/**
 * The admin service: the platform operator's surface (issue 28). Admin keys (hashed, shown
 * once, revocable, optionally expiring) and their verification for the gateway; the first key
 * comes from the command (cli.ts).
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
import { AlertMailNotifier } from './clients/alert-mail.notifier';
import { healthProbes } from './clients/health-probes';
import { platformSignals } from './clients/platform-signals.client';
import { Alerts, notifyAll, type AlertNotifier } from './domain/alerts';
import { AlertWebhookNotifier } from './clients/alert-webhook.notifier';
import { Health } from './domain/health';
import { HealthHistory } from './domain/health-history';
import { AlertRepository } from './repo/alert.repository';
import { HealthSampleRepository } from './repo/health-sample.repository';
import { PostgresHealthRepository } from './repo/postgres-health.repository';
import { healthHandlers } from './rpc/health.handlers';
import { Rounds } from '@mailroom/platform';
import type { AdminDb } from './repo/tables';
import { adminHandlers } from './rpc/handlers';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export const adminService: ServiceModule<AdminConfig, AdminDb> = {
  name: 'admin',
  database: { schema: 'admin', migrationsDir: MIGRATIONS_DIR },
  loadConfig,
  async start({ config, bus, db, life, log, clock }) {
    const keys = new AdminKeys(new AdminKeyRepository(db), clock);
    // Health, its history and the alerts (issue 28, parts 2 and 3).
    const probes = healthProbes(bus, new PostgresHealthRepository(db), {
      rspamdUrl: config.RSPAMD_URL,
      relayUrl: config.MAIL_PROVIDER === 'smtp' ? config.SMTP_RELAY_URL : null,
    });
    const health = new Health(probes, { expectedServices: config.HEALTH_EXPECTED_SERVICES, maxReplicationLagSeconds: config.HEALTH_MAX_REPLICATION_LAG_SECONDS, maxConsumerPending: config.HEALTH_MAX_CONSUMER_PENDING }, clock);
    const history = new HealthHistory(new HealthSampleRepository(db), () => health.check(), clock, { intervalMs: config.HEALTH_SAMPLE_INTERVAL_MS, retentionDays: config.HEALTH_RETENTION_DAYS });
    const notifiers: AlertNotifier[] = [new AlertMailNotifier(bus, config.ALERT_EMAIL_TO, log)];
    if (config.ALERT_WEBHOOK_URL && config.ALERT_WEBHOOK_SECRET) {
      const webhook = { url: config.ALERT_WEBHOOK_URL, secret: config.ALERT_WEBHOOK_SECRET, allowedCidrs: config.ALERT_WEBHOOK_ALLOWED_CIDRS, timeoutMs: config.ALERT_WEBHOOK_TIMEOUT_MS };
      notifiers.push(new AlertWebhookNotifier(webhook, log));
    }
    const alerts = new Alerts(new AlertRepository(db), notifyAll(notifiers), clock);
    await alerts.init();
    const signals = platformSignals(bus);
    const sampler = new Rounds(
      async () => {
        await history.round(async (report) => {
          await alerts.evaluate(report, signals);
          await alerts.purge(new Date(clock.now().getTime() - config.HEALTH_RETENTION_DAYS * 86_400_000));
        });
        return false;
      },
      (err) => log.warn({ err }, 'health sample failed; the next interval tries again'),
      config.HEALTH_SAMPLE_INTERVAL_MS,
    );
    life.add('admin:rpc', serveRpc(bus, 'admin', adminHandlers(keys, healthHandlers(health, history, alerts))), (s) => s.stop());
    // The first sample one interval after start-up: the services started beside this one are up by then.
    const first = setTimeout(() => sampler.start(), config.HEALTH_SAMPLE_INTERVAL_MS);
    life.add('admin:health-sampler', sampler, (s) => (clearTimeout(first), s.stop()));
  },
};

if (require.main === module) void runService(adminService, process.env);
