import { DEFAULT_ALERT_THRESHOLDS, type HealthReport } from '@mailroom/contracts';
import { evaluateRule, requiredInARow, type RuleInputs } from './alert-rules';

function report(over: Partial<HealthReport> = {}): HealthReport {
  return {
    status: 'ok',
    reasons: [],
    checked_at: '2026-11-30T12:00:00.000Z',
    services: [{ name: 'webhooks', status: 'up', instances: [{ instance_id: 'a', version: '0.1.0', started_at: '2026-11-30T11:00:00.000Z', uptime_seconds: 3600 }] }],
    postgres: { reachable: true, error: null, replication_lag_seconds: null },
    nats: { reachable: true, error: null, jetstream: { reachable: true, error: null, storage_bytes: 80, max_storage_bytes: 100, streams: [], consumers: [{ stream: 'EVENTS', name: 'metrics--rollup', pending: 5, ack_pending: 0, redelivered: 0 }] } },
    rspamd: { reachable: true, error: null },
    relay: { reachable: true, error: null, host: 'relay', port: 25 },
    ...over,
  };
}

const inputs = (r: HealthReport, mail: RuleInputs['mail'] = () => null): RuleInputs => ({ report: r, mail, disabledEndpoints: () => null, failedDomains: () => null });

describe('alert rules', () => {
  it('service_down fires for a service short of instances, naming it', () => {
    const down = report({ services: [{ name: 'webhooks', status: 'down', instances: [] }] });
    expect(evaluateRule('service_down', { min_instances: 1 }, inputs(down))).toEqual({ met: true, detail: 'webhooks: 0 instance(s)' });
    expect(evaluateRule('service_down', { min_instances: 1 }, inputs(report()))?.met).toBe(false);
    expect(evaluateRule('service_down', { min_instances: 2 }, inputs(report()))?.met).toBe(true);
  });

  it('consumer_lag fires above max_pending, and is not measured without JetStream', () => {
    expect(evaluateRule('consumer_lag', { max_pending: 4 }, inputs(report()))).toEqual({ met: true, detail: 'metrics--rollup: 5 waiting' });
    expect(evaluateRule('consumer_lag', { max_pending: 5 }, inputs(report()))?.met).toBe(false);
    const r = report();
    r.nats.jetstream.reachable = false;
    expect(evaluateRule('consumer_lag', { max_pending: 5 }, inputs(r))).toBeNull();
  });

  it('complaint_rate fires over 0.1% by default, once enough mail was sent', () => {
    const t = DEFAULT_ALERT_THRESHOLDS.complaint_rate;
    expect(evaluateRule('complaint_rate', t, inputs(report(), () => ({ sent: 1000, bounced: 0, complained: 2 })))?.met).toBe(true);
    expect(evaluateRule('complaint_rate', t, inputs(report(), () => ({ sent: 1000, bounced: 0, complained: 1 })))?.met).toBe(false);
    expect(evaluateRule('complaint_rate', t, inputs(report(), () => ({ sent: 10, bounced: 0, complained: 5 })))?.met).toBe(false);
    expect(evaluateRule('complaint_rate', t, inputs(report()))).toBeNull();
  });

  it('relay_unreachable needs failed_checks failures in a row; disk_usage compares with the storage limit', () => {
    expect(requiredInARow('relay_unreachable', { failed_checks: 3 })).toBe(3);
    expect(requiredInARow('service_down', { min_instances: 1 })).toBe(1);
    const r = report({ relay: { reachable: false, error: 'ECONNREFUSED', host: 'relay', port: 25 } });
    expect(evaluateRule('relay_unreachable', { failed_checks: 1 }, inputs(r))).toEqual({ met: true, detail: 'relay:25: ECONNREFUSED' });
    expect(evaluateRule('disk_usage', { max_ratio: 0.8 }, inputs(report()))?.met).toBe(false);
    expect(evaluateRule('disk_usage', { max_ratio: 0.79 }, inputs(report()))?.met).toBe(true);
  });
});
