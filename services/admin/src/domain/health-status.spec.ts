import { overallStatus, type Observations } from './health-status';

const limits = { expectedServices: ['gateway', 'webhooks'], maxReplicationLagSeconds: 30, maxConsumerPending: 100 };
const instance = { instance_id: 'a', version: '0.1.0', started_at: '2026-11-30T12:00:00.000Z', uptime_seconds: 5 };

function healthy(): Observations {
  return {
    checked_at: '2026-11-30T12:00:05.000Z',
    services: [
      { name: 'gateway', status: 'up', instances: [instance] },
      { name: 'webhooks', status: 'up', instances: [instance] },
    ],
    postgres: { reachable: true, error: null, replication_lag_seconds: null },
    nats: { reachable: true, error: null, jetstream: { reachable: true, error: null, storage_bytes: 10, max_storage_bytes: null, streams: [], consumers: [{ stream: 'EVENTS', name: 'webhooks--dispatch', pending: 3, ack_pending: 0, redelivered: 0 }] } },
    rspamd: { reachable: true, error: null },
    relay: { reachable: true, error: null, host: 'relay', port: 25 },
  };
}

describe('the overall status', () => {
  it('is ok with no reason when everything answers', () => {
    expect(overallStatus(healthy(), limits)).toEqual({ status: 'ok', reasons: [] });
  });

  it('is degraded naming a service without instances, rspamd or the relay unreachable, a lagging standby or consumer', () => {
    const seen = healthy();
    seen.services[1] = { name: 'webhooks', status: 'down', instances: [] };
    seen.rspamd = { reachable: false, error: 'ECONNREFUSED' };
    seen.relay = { reachable: false, error: 'timeout', host: 'relay', port: 25 };
    seen.postgres.replication_lag_seconds = 31;
    seen.nats.jetstream.consumers[0]!.pending = 101;
    const { status, reasons } = overallStatus(seen, limits);
    expect(status).toBe('degraded');
    expect(reasons.map((r) => r.component)).toEqual(['service:webhooks', 'rspamd', 'relay', 'postgres', 'consumer:webhooks--dispatch']);
    expect(reasons[0]!.message).toBe('service webhooks has no running instance');
  });

  it('is ok at the limits themselves, and without a relay to check', () => {
    const seen = { ...healthy(), relay: null };
    seen.postgres.replication_lag_seconds = 30;
    seen.nats.jetstream.consumers[0]!.pending = 100;
    expect(overallStatus(seen, limits).status).toBe('ok');
  });

  it('is down when PostgreSQL, NATS or JetStream is unreachable, or no service runs, the worst reasons first', () => {
    const pg = healthy();
    pg.postgres = { reachable: false, error: 'refused', replication_lag_seconds: null };
    pg.rspamd = { reachable: false, error: 'refused' };
    expect(overallStatus(pg, limits).reasons.map((r) => [r.component, r.status])).toEqual([
      ['postgres', 'down'],
      ['rspamd', 'degraded'],
    ]);
    const js = healthy();
    js.nats.jetstream = { ...js.nats.jetstream, reachable: false, error: 'no JetStream' };
    expect(overallStatus(js, limits)).toMatchObject({ status: 'down', reasons: [{ component: 'jetstream' }] });
    const none = healthy();
    none.services = [];
    expect(overallStatus(none, limits)).toMatchObject({ status: 'down', reasons: [{ component: 'services', message: 'no instance of any service answers' }] });
  });
});
