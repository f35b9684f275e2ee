/** The health probes of the domain (ports.ts), filled in by the clients and the database. */
import type { Bus } from '@mailroom/messaging';
import type { HealthProbes } from '../domain/ports';
import type { PostgresHealthRepository } from '../repo/postgres-health.repository';
import { BusHealthClient } from './bus-health.client';
import { RelayClient, relayTarget } from './relay.client';
import { RspamdClient } from './rspamd.client';

export function healthProbes(bus: Bus, postgres: PostgresHealthRepository, opts: { rspamdUrl: string | null; relayUrl: string | null }): HealthProbes {
  const busHealth = new BusHealthClient(bus);
  const rspamd = opts.rspamdUrl ? new RspamdClient(opts.rspamdUrl) : undefined;
  const relay = opts.relayUrl ? new RelayClient(relayTarget(opts.relayUrl)) : undefined;
  return {
    instances: () => busHealth.instances(),
    bus: () => busHealth.observe(),
    postgres: async () => {
      try {
        return { reachable: true, error: null, replication_lag_seconds: await postgres.replicationLagSeconds() };
      } catch (err) {
        return { reachable: false, error: err instanceof Error ? err.message : String(err), replication_lag_seconds: null };
      }
    },
    rspamd: async () => (rspamd ? rspamd.ping() : null),
    relay: async () => (relay ? relay.check() : null),
  };
}
