/** What the domains domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { AuditEntry, EventEnvelope, Fact, OrganizationLimits } from '@mailroom/contracts';
import type { EnvironmentTombstones, Transact as TransactOf } from '@mailroom/platform';
import type { DomainsTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<DomainsTx>;

/** An organization's plan and what it may hold, asked of orgs (orgs.organization.limits). */
export interface PlanLimitsPort {
  of(orgId: string): Promise<OrganizationLimits>;
}

/** Environments orgs deleted, recorded in this schema (libs/runtime `DeletedEnvironments`). */
export type DeletedEnvironments = EnvironmentTombstones<DomainsTx>;

/**
 * What a DNS lookup answered: records (each TXT record's strings joined), none (the name or
 * the type does not exist: NXDOMAIN, NODATA), or no answer for now (timeout, SERVFAIL,
 * refused): a temporary failure, never taken for a missing record.
 */
export type DnsAnswer<T> = { kind: 'found'; values: T[] } | { kind: 'none' } | { kind: 'temporary'; error: string };

/** The resolver the checks use (DNS_SERVERS). */
export interface DnsLookup {
  txt(name: string): Promise<DnsAnswer<string>>;
  mx(name: string): Promise<DnsAnswer<{ exchange: string; priority: number }>>;
  cname(name: string): Promise<DnsAnswer<string>>;
}

/**
 * What the domains service tells others, written in the transaction of the change (the
 * outbox): the public event `domain.verified`, and the fact `internal.domains.domain.changed`.
 */
export interface DomainAnnouncements {
  event(tx: DomainsTx, event: EventEnvelope): Promise<void>;
  changed(tx: DomainsTx, id: string, fact: Fact<'internal.domains.domain.changed'>): Promise<void>;
  /** An audited action's entry (AUDIT, for the admin service's log). */
  audit(tx: DomainsTx, entry: AuditEntry): Promise<void>;
  /** Publish what was committed now, not at the relay's next interval. */
  kick(): void;
}

/** Inboxes, asked of mailbox: those on a domain name (a domain in use is not deleted), and one by id (a catch-all's target). */
export interface InboxesOnDomain {
  list(orgId: string, envId: string, domain: string): Promise<{ data: { inbox_id: string; address: string }[]; total: number }>;
  /** A live inbox of the environment; null when it has none of that id. */
  ofEnvironment(orgId: string, envId: string, inboxId: string): Promise<{ inbox_id: string; address: string; domain: string } | null>;
}

/** A DKIM key pair made for one domain: RSA 2048. */
export interface DkimKeyPair {
  /** base64 of the DER SubjectPublicKeyInfo, as the DKIM record's `p=` carries it. */
  publicKey: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
}
export type MakeDkimKey = () => Promise<DkimKeyPair>;

/** Seals what must be read back (the DKIM private key) under SECRETS_ENCRYPTION_KEY; `bound`: associated data. */
export interface Sealer {
  seal(plaintext: string, bound: string): Buffer;
}
