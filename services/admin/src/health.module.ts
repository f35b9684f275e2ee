/**
 * Wiring of the platform's health, its history and the alerts (issue 28, parts 2 and 3): the
 * probes, the status rule's limits, the sampler (one sample per interval across instances,
 * the first one interval after start-up) and the notifiers. Answers the handlers of their
 * operations; main.ts serves them with the others.
 */
import type { Bus } from '@mailroom/messaging';
import { Rounds, type Clock, type Lifecycle, type Logger } from '@mailroom/platform';
import type { Kysely } from '@mailroom/db';
import type { AdminConfig } from './config';
import { AlertMailNotifier } from './clients/alert-mail.notifier';
import { AlertWebhookNotifier } from './clients/alert-webhook.notifier';
import { healthProbes } from './clients/health-probes';
import { platformSignals } from './clients/platform-signals.client';
import { Alerts, notifyAll, type AlertNotifier } from './domain/alerts';
import type { AuditLog } from './domain/audit-log';
import { Health } from './domain/health';
import { HealthHistory } from './domain/health-history';
import { AlertRepository } from './repo/alert.repository';
import { HealthSampleRepository } from './repo/health-sample.repository';
import { PostgresHealthRepository } from './repo/postgres-health.repository';
import type { AdminDb } from './repo/tables';
import { healthHandlers } from './rpc/health.handlers';

const DAY_MS = 86_400_000;

export async function startHealth(deps: { config: AdminConfig; bus: Bus; db: Kysely<AdminDb>; life: Lifecycle; log: Logger; clock: Clock }, audit: Pick<AuditLog, 'record'>): Promise<ReturnType<typeof healthHandlers>> {
  const { config, bus, db, life, log, clock } = deps;
  const probes = healthProbes(bus, new PostgresHealthRepository(db), {
    rspamdUrl: config.RSPAMD_URL,
    relayUrl: config.MAIL_PROVIDER === 'smtp' ? config.SMTP_RELAY_URL : null,
  });
  const limits = { expectedServices: config.HEALTH_EXPECTED_SERVICES, maxReplicationLagSeconds: config.HEALTH_MAX_REPLICATION_LAG_SECONDS, maxConsumerPending: config.HEALTH_MAX_CONSUMER_PENDING };
  const health = new Health(probes, limits, clock);
  const history = new HealthHistory(new HealthSampleRepository(db), () => health.check(), clock, { intervalMs: config.HEALTH_SAMPLE_INTERVAL_MS, retentionDays: config.HEALTH_RETENTION_DAYS });

  const notifiers: AlertNotifier[] = [new AlertMailNotifier(bus, config.ALERT_EMAIL_TO, log)];
  if (config.ALERT_WEBHOOK_URL && config.ALERT_WEBHOOK_SECRET) {
    const webhook = { url: config.ALERT_WEBHOOK_URL, secret: config.ALERT_WEBHOOK_SECRET, allowedCidrs: config.ALERT_WEBHOOK_ALLOWED_CIDRS, timeoutMs: config.ALERT_WEBHOOK_TIMEOUT_MS };
    notifiers.push(new AlertWebhookNotifier(webhook, log));
  }
  const alerts = new Alerts(new AlertRepository(db), notifyAll(notifiers), clock, audit);
  await alerts.init();
  const signals = platformSignals(bus);

  const sampler = new Rounds(
    async () => {
      await history.round(async (report) => {
        await alerts.evaluate(report, signals);
        await alerts.purge(new Date(clock.now().getTime() - config.HEALTH_RETENTION_DAYS * DAY_MS));
      });
      return false;
    },
    (err) => log.warn({ err }, 'health sample failed; the next interval tries again'),
    config.HEALTH_SAMPLE_INTERVAL_MS,
  );
  // The first sample one interval after start-up: the services started beside this one are up by then.
  const first = setTimeout(() => sampler.start(), config.HEALTH_SAMPLE_INTERVAL_MS).unref();
  life.add('admin:health-sampler', sampler, (s) => (clearTimeout(first), s.stop()));
  return healthHandlers(health, history, alerts);
}
