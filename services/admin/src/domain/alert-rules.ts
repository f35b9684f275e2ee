/**
 * The alert rules: whether each one's condition holds, from a health report and the platform's
 * signals (rates from metrics), and how many evaluations in a row it must hold to fire.
 * Pure functions; `null`: the rule could not be measured this time (its condition is kept as it was).
 */
import { ALERT_KEYS, type AlertKey, type AlertThresholds, type HealthReport } from '@mailroom/contracts';

/** Counts over a window, when they could be had. */
export interface Signals {
  sent: number;
  bounced: number;
  complained: number;
}

export interface RuleInputs {
  report: HealthReport;
  /** Mail counts of the window each rate rule asks for; null: metrics did not answer. */
  mail(windowHours: number): Signals | null;
  /** Webhook endpoints auto-disabled within the window; null: not measured. */
  disabledEndpoints(windowHours: number): number | null;
  /** Custom domains failing verification, checked within the window; null: not measured. */
  failedDomains(windowHours: number): number | null;
}

export interface Verdict {
  met: boolean;
  detail: string;
}

export const ALERT_DESCRIPTIONS: Record<AlertKey, string> = {
  service_down: 'A service has fewer running instances than min_instances',
  consumer_lag: 'A durable consumer has more than max_pending messages waiting',
  bounce_rate: 'More than max_rate of the mail sent over window_hours hard-bounced (with at least min_sent sent)',
  complaint_rate: 'More than max_rate of the mail sent over window_hours drew a complaint (with at least min_sent sent)',
  webhook_endpoint_disabled: 'More than max_disabled webhook endpoints were auto-disabled over window_hours',
  domain_verification_failed: 'More than max_failed custom domains fail verification (status failed, checked within window_hours)',
  relay_unreachable: 'The send relay failed failed_checks checks in a row',
  disk_usage: "JetStream's storage is fuller than max_ratio of its limit",
};

/** Evaluations in a row the condition must hold before the alert fires. */
export function requiredInARow<K extends AlertKey>(key: K, thresholds: AlertThresholds[K]): number {
  return key === 'relay_unreachable' ? (thresholds as AlertThresholds['relay_unreachable']).failed_checks : 1;
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

function rate(kind: 'bounced' | 'complained', t: AlertThresholds['bounce_rate'], inputs: RuleInputs): Verdict | null {
  const m = inputs.mail(t.window_hours);
  if (!m) return null;
  if (m.sent < t.min_sent) return { met: false, detail: `${m.sent} sent in ${t.window_hours} h: fewer than min_sent (${t.min_sent})` };
  const r = m[kind] / m.sent;
  const what = kind === 'bounced' ? 'hard-bounced' : 'drew a complaint';
  return { met: r > t.max_rate, detail: `${m[kind]} of ${m.sent} sent in ${t.window_hours} h ${what} (${pct(r)}; at most ${pct(t.max_rate)})` };
}

export function evaluateRule<K extends AlertKey>(key: K, thresholds: AlertThresholds[K], inputs: RuleInputs): Verdict | null {
  const { report } = inputs;
  switch (key) {
    case 'service_down': {
      const t = thresholds as AlertThresholds['service_down'];
      const short = report.services.filter((s) => s.instances.length < t.min_instances);
      return short.length
        ? { met: true, detail: short.map((s) => `${s.name}: ${s.instances.length} instance(s)`).join('; ') }
        : { met: false, detail: `every service has at least ${t.min_instances} instance(s)` };
    }
    case 'consumer_lag': {
      const t = thresholds as AlertThresholds['consumer_lag'];
      if (!report.nats.jetstream.reachable) return null;
      const behind = report.nats.jetstream.consumers.filter((c) => c.pending > t.max_pending);
      return behind.length
        ? { met: true, detail: behind.map((c) => `${c.name}: ${c.pending} waiting`).join('; ') }
        : { met: false, detail: `no consumer has more than ${t.max_pending} waiting` };
    }
    case 'bounce_rate':
      return rate('bounced', thresholds as AlertThresholds['bounce_rate'], inputs);
    case 'complaint_rate':
      return rate('complained', thresholds as AlertThresholds['complaint_rate'], inputs);
    case 'webhook_endpoint_disabled': {
      const t = thresholds as AlertThresholds['webhook_endpoint_disabled'];
      const n = inputs.disabledEndpoints(t.window_hours);
      return n === null ? null : { met: n > t.max_disabled, detail: `${n} endpoint(s) auto-disabled in ${t.window_hours} h` };
    }
    case 'domain_verification_failed': {
      const t = thresholds as AlertThresholds['domain_verification_failed'];
      const n = inputs.failedDomains(t.window_hours);
      return n === null ? null : { met: n > t.max_failed, detail: `${n} domain(s) failing verification, checked in the last ${t.window_hours} h` };
    }
    case 'relay_unreachable': {
      if (!report.relay) return { met: false, detail: 'mail is not sent through an SMTP relay' };
      return report.relay.reachable
        ? { met: false, detail: `${report.relay.host}:${report.relay.port} answers` }
        : { met: true, detail: `${report.relay.host}:${report.relay.port}: ${report.relay.error ?? 'no answer'}` };
    }
    case 'disk_usage': {
      const t = thresholds as AlertThresholds['disk_usage'];
      const { storage_bytes: used, max_storage_bytes: max } = report.nats.jetstream;
      if (used === null) return null;
      if (max === null) return { met: false, detail: `${used} bytes stored; JetStream has no storage limit` };
      const r = used / max;
      return { met: r > t.max_ratio, detail: `${used} of ${max} bytes (${pct(r)}; at most ${pct(t.max_ratio)})` };
    }
  }
  return null;
}

export function isAlertKey(key: string): key is AlertKey {
  return (ALERT_KEYS as readonly string[]).includes(key);
}
