/**
 * The rule of the platform's overall status, from what the checks saw:
 * - down: PostgreSQL or NATS or JetStream unreachable (nothing is stored or delivered), or no
 *   instance of any expected service answers;
 * - degraded: an expected service has no instance, rspamd or the send relay is unreachable,
 *   a standby replays more than `maxReplicationLagSeconds` behind, or a durable consumer has
 *   more than `maxConsumerPending` messages waiting;
 * - ok otherwise. Every reason is listed, the worst first.
 */
import type { HealthReason, HealthReport, HealthStatus } from '@mailroom/contracts';

export interface StatusLimits {
  expectedServices: readonly string[];
  maxReplicationLagSeconds: number;
  maxConsumerPending: number;
}

/** What the checks saw: the report without its verdict. */
export type Observations = Omit<HealthReport, 'status' | 'reasons'>;

export function overallStatus(seen: Observations, limits: StatusLimits): { status: HealthStatus; reasons: HealthReason[] } {
  const reasons: HealthReason[] = [];
  const down = (component: string, message: string) => reasons.push({ component, status: 'down', message });
  const degraded = (component: string, message: string) => reasons.push({ component, status: 'degraded', message });

  if (!seen.postgres.reachable) down('postgres', `PostgreSQL is unreachable: ${seen.postgres.error ?? 'no answer'}`);
  if (!seen.nats.reachable) down('nats', `NATS is unreachable: ${seen.nats.error ?? 'no answer'}`);
  else if (!seen.nats.jetstream.reachable) down('jetstream', `JetStream does not answer: ${seen.nats.jetstream.error ?? 'no answer'}`);

  const running = new Set(seen.services.filter((s) => s.instances.length > 0).map((s) => s.name));
  const missing = limits.expectedServices.filter((name) => !running.has(name));
  if (seen.nats.reachable && limits.expectedServices.length > 0 && missing.length === limits.expectedServices.length) down('services', 'no instance of any service answers');
  else for (const name of missing) degraded(`service:${name}`, `service ${name} has no running instance`);

  if (seen.rspamd && !seen.rspamd.reachable) degraded('rspamd', `rspamd is unreachable (inbound spam checks fail): ${seen.rspamd.error ?? 'no answer'}`);
  if (seen.relay && !seen.relay.reachable) degraded('relay', `the send relay ${seen.relay.host}:${seen.relay.port} is unreachable: ${seen.relay.error ?? 'no answer'}`);
  const lag = seen.postgres.replication_lag_seconds;
  if (lag !== null && lag > limits.maxReplicationLagSeconds) degraded('postgres', `PostgreSQL replication lags ${Math.round(lag)} s behind (more than ${limits.maxReplicationLagSeconds} s)`);
  for (const c of seen.nats.jetstream.consumers) {
    if (c.pending > limits.maxConsumerPending) degraded(`consumer:${c.name}`, `consumer ${c.name} has ${c.pending} messages waiting (more than ${limits.maxConsumerPending})`);
  }

  reasons.sort((a, b) => (a.status === b.status ? 0 : a.status === 'down' ? -1 : 1));
  const status: HealthStatus = reasons.some((r) => r.status === 'down') ? 'down' : reasons.length ? 'degraded' : 'ok';
  return { status, reasons };
}
