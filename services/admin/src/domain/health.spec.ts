import { ManualClock } from '@mailroom/platform';
import { bounded, Health } from './health';
import type { HealthProbes } from './ports';

const clock = new ManualClock(new Date('2026-11-30T12:00:10.000Z'));
const limits = { expectedServices: ['gateway', 'webhooks'], maxReplicationLagSeconds: 30, maxConsumerPending: 100 };

function probes(over: Partial<HealthProbes> = {}): HealthProbes {
  return {
    instances: async () => [
      { service: 'gateway', instance_id: 'b', version: '0.1.0', started_at: '2026-11-30T12:00:05.000Z' },
      { service: 'gateway', instance_id: 'a', version: '0.1.0', started_at: '2026-11-30T12:00:00.000Z' },
    ],
    bus: async () => ({ reachable: true, error: null, jetstream: { reachable: true, error: null, storage_bytes: 0, max_storage_bytes: null, streams: [], consumers: [] } }),
    postgres: async () => ({ reachable: true, error: null, replication_lag_seconds: null }),
    rspamd: async () => null,
    relay: async () => null,
    ...over,
  };
}

describe('the health report', () => {
  it('lists every expected service with its instances, oldest first, with their uptime; a service without any is down and named', async () => {
    const report = await new Health(probes(), limits, clock).check();
    expect(report.services).toEqual([
      {
        name: 'gateway',
        status: 'up',
        instances: [
          { instance_id: 'a', version: '0.1.0', started_at: '2026-11-30T12:00:00.000Z', uptime_seconds: 10 },
          { instance_id: 'b', version: '0.1.0', started_at: '2026-11-30T12:00:05.000Z', uptime_seconds: 5 },
        ],
      },
      { name: 'webhooks', status: 'down', instances: [] },
    ]);
    expect(report).toMatchObject({ status: 'degraded', checked_at: '2026-11-30T12:00:10.000Z', reasons: [{ component: 'service:webhooks' }] });
  });

  it('reports a probe that throws as unreachable, never failing the report', async () => {
    const report = await new Health(probes({ postgres: async () => Promise.reject(new Error('ECONNREFUSED')) }), limits, clock).check();
    expect(report.postgres).toEqual({ reachable: false, error: 'ECONNREFUSED', replication_lag_seconds: null });
    expect(report.status).toBe('down');
  });

  it('bounds a probe that hangs', async () => {
    expect(await bounded(() => new Promise<string>(() => undefined), (e) => e, 20)).toBe('no answer within 20 ms');
  });
});
