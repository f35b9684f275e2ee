/** What the admin domain needs from outside systems; the clients (src/clients) and repositories fill these in. */
import type { HealthReport, InstanceInfo } from '@mailroom/contracts';

export type BusObservation = HealthReport['nats'];
export type PostgresObservation = HealthReport['postgres'];
export type Reachability = { reachable: boolean; error: string | null };

export interface HealthProbes {
  /** Every running instance, found by the discovery ping (empty when NATS is down). */
  instances(): Promise<InstanceInfo[]>;
  bus(): Promise<BusObservation>;
  postgres(): Promise<PostgresObservation>;
  /** null: spam scanning is off. */
  rspamd(): Promise<Reachability | null>;
  /** null: mail is not sent through an SMTP relay. */
  relay(): Promise<(Reachability & { host: string; port: number }) | null>;
}

/** The platform's mail since a time (metrics' rollups). */
export interface PlatformMail {
  sent: number;
  bounced_hard: number;
  bounced_soft: number;
  complained: number;
}

/** What the alerts measure beyond the health report, asked of the services that know it. */
export interface PlatformSignals {
  mail(since: Date): Promise<PlatformMail>;
  /** Webhook endpoints auto-disabled since. */
  disabledEndpoints(since: Date): Promise<number>;
  /** Custom domains failing verification, checked since. */
  failedDomains(since: Date): Promise<number>;
}
