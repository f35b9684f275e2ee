import { type AuditEntry, type AuditedCall, type HealthReport } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { AlertRow, AlertTransitionRow, AlertWrite } from '../repo/alert.repository';
import { Alerts, type AlertNotice, type AlertStore } from './alerts';
import type { PlatformSignals } from './ports';

/** The alert table in memory: rows by key, transitions in order. */
class MemoryAlerts implements AlertStore {
  rows = new Map<string, AlertRow>();
  transitions: AlertTransitionRow[] = [];
  async ensure(rows: { key: string; thresholds: string }[]) {
    for (const r of rows) {
      if (!this.rows.has(r.key)) {
        this.rows.set(r.key, { key: r.key, thresholds: JSON.parse(r.thresholds), condition_met: false, consecutive: 0, detail: null, muted_until: null, acknowledged_at: null, last_fired_at: null, last_resolved_at: null, evaluated_at: null });
      }
    }
  }
  async all() {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }
  async lock(key: string) {
    const r = this.rows.get(key);
    return r && { ...r };
  }
  async save(row: AlertWrite) {
    this.rows.set(row.key, { ...row, thresholds: JSON.parse(row.thresholds) });
  }
  async addTransition(row: AlertTransitionRow) {
    this.transitions.push(row);
  }
  async recentTransitions(perKey: number) {
    const newest = [...this.transitions].reverse();
    return newest.filter((t, i) => newest.slice(0, i).filter((u) => u.key === t.key).length < perKey);
  }
  async purgeTransitions(before: Date) {
    this.transitions = this.transitions.filter((t) => t.at >= before);
  }
  transaction<T>(work: (trx: never) => Promise<T>): Promise<T> {
    return work(undefined as never);
  }
}

function report(webhooks: number): HealthReport {
  const instance = { instance_id: 'a', version: '0.1.0', started_at: '2026-11-30T11:00:00.000Z', uptime_seconds: 60 };
  return {
    status: webhooks ? 'ok' : 'degraded',
    reasons: [],
    checked_at: '2026-11-30T12:00:00.000Z',
    services: [{ name: 'webhooks', status: webhooks ? 'up' : 'down', instances: Array.from({ length: webhooks }, () => instance) }],
    postgres: { reachable: true, error: null, replication_lag_seconds: null },
    nats: { reachable: true, error: null, jetstream: { reachable: true, error: null, storage_bytes: 1, max_storage_bytes: null, streams: [], consumers: [] } },
    rspamd: null,
    relay: null,
  };
}

const signals: PlatformSignals = {
  mail: async () => ({ sent: 1000, bounced_hard: 0, bounced_soft: 0, complained: 0 }),
  disabledEndpoints: async () => 0,
  failedDomains: async () => Promise.reject(new Error('domains is down')),
};

const OPERATOR: AuditedCall = { auth: { kind: 'admin', admin_key_id: 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz' } };

async function setUp() {
  const store = new MemoryAlerts();
  const notices: AlertNotice[] = [];
  const clock = new ManualClock(new Date('2026-11-30T12:00:00.000Z'));
  const audited: AuditEntry[] = [];
  const alerts = new Alerts(store, { notify: async (n) => void notices.push(n) }, clock, { record: async (e) => void audited.push(e) });
  await alerts.init();
  const state = async (key: string) => (await alerts.list()).data.find((a) => a.key === key)!;
  return { store, notices, clock, alerts, state, audited };
}

describe('alerts', () => {
  it('fire when their condition holds, notify once, and resolve with a notice when it clears', async () => {
    const { alerts, notices, state, clock } = await setUp();
    await alerts.evaluate(report(0), signals);
    expect(await state('service_down')).toMatchObject({ state: 'firing', condition_met: true, detail: 'webhooks: 0 instance(s)', last_fired_at: '2026-11-30T12:00:00.000Z' });
    await alerts.evaluate(report(0), signals);
    expect(notices.map((n) => [n.key, n.notice])).toEqual([['service_down', 'firing']]);
    clock.advance(60_000);
    await alerts.evaluate(report(1), signals);
    const cleared = await state('service_down');
    expect(cleared).toMatchObject({ state: 'ok', last_resolved_at: '2026-11-30T12:01:00.000Z' });
    expect(cleared.transitions.map((t) => [t.from, t.to])).toEqual([['firing', 'ok'], ['ok', 'firing']]);
    expect(notices.map((n) => [n.key, n.notice])).toEqual([['service_down', 'firing'], ['service_down', 'resolved']]);
  });

  it('leave a rule as it was when its signal cannot be had, and evaluate the rates from metrics', async () => {
    const { alerts, state } = await setUp();
    await alerts.evaluate(report(1), signals);
    expect(await state('domain_verification_failed')).toMatchObject({ state: 'ok', detail: null, evaluated_at: expect.any(String) });
    expect((await state('complaint_rate')).detail).toBe('0 of 1000 sent in 24 h drew a complaint (0.00%; at most 0.10%)');
  });

  it('are acknowledged only while firing, muted until a time (no notice meanwhile), and take valid thresholds only', async () => {
    const { alerts, notices, state, clock, audited } = await setUp();
    await expect(alerts.update({ key: 'service_down', acknowledge: true }, OPERATOR)).rejects.toMatchObject({ code: 'conflict' });
    await expect(alerts.update({ key: 'disk_full', acknowledge: true }, OPERATOR)).rejects.toMatchObject({ code: 'not_found' });
    await expect(alerts.update({ key: 'service_down', thresholds: { min_instances: 0 } }, OPERATOR)).rejects.toMatchObject({ code: 'invalid_request', details: [{ path: 'thresholds.min_instances' }] });
    await expect(alerts.update({ key: 'service_down', thresholds: { max_ratio: 0.5 } }, OPERATOR)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(alerts.update({ key: 'service_down', mute_until: '2026-11-30T11:00:00.000Z' }, OPERATOR)).rejects.toMatchObject({ code: 'invalid_request' });

    await alerts.evaluate(report(0), signals);
    expect(await alerts.update({ key: 'service_down', acknowledge: true }, OPERATOR)).toMatchObject({ state: 'acknowledged', acknowledged_at: '2026-11-30T12:00:00.000Z' });
    expect(await alerts.update({ key: 'service_down', mute_until: '2026-11-30T13:00:00.000Z' }, OPERATOR)).toMatchObject({ state: 'muted' });
    // Each change audited with the operator's key, what changed and the state before and after.
    expect(audited.map((e) => [e.action, e.actor.id, e.target.id, e.details.from, e.details.to])).toEqual([
      ['alert.updated', 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz', 'service_down', 'firing', 'acknowledged'],
      ['alert.updated', 'adk_01jzzzzzzzzzzzzzzzzzzzzzzz', 'service_down', 'acknowledged', 'muted'],
    ]);
    clock.advance(30 * 60_000);
    await alerts.evaluate(report(1), signals);
    await alerts.evaluate(report(0), signals);
    expect((await state('service_down')).state).toBe('muted');
    // The mute runs out while the condition holds: firing again, and said so.
    clock.advance(31 * 60_000);
    await alerts.evaluate(report(0), signals);
    expect(await state('service_down')).toMatchObject({ state: 'firing', muted_until: null });
    expect(notices.map((n) => n.notice)).toEqual(['firing', 'firing']);

    expect((await alerts.update({ key: 'relay_unreachable', thresholds: { failed_checks: 3 } }, OPERATOR)).thresholds).toEqual({ failed_checks: 3 });
  });
});
