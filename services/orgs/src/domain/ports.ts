/** What the orgs domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { AuditEntry, Fact, SystemMail, UserProfile } from '@mailroom/contracts';
import type { Transact as TransactOf } from '@mailroom/platform';
import type { OrgsTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<OrgsTx>;

/** People's accounts, from auth (names and emails of members); unknown ids are left out. */
export interface UsersPort {
  profiles(userIds: string[]): Promise<UserProfile[]>;
}

/**
 * Membership facts (internal.orgs.member.changed on ORGS_FACTS): written in the transaction
 * of the change (the outbox), published after its commit, so gateways learn every committed
 * change and nothing that rolled back.
 */
export interface MembershipFacts {
  changed(tx: OrgsTx, fact: Fact<'internal.orgs.member.changed'>): Promise<void>;
  /** Publish what was committed now, not at the relay's next interval. */
  kick(): void;
}

/** Audit entries of the organization's security-relevant changes (AUDIT, for the admin service's log), written with the change. */
export interface AuditTrail {
  record(tx: OrgsTx, entry: AuditEntry): Promise<void>;
  kick(): void;
}

/** Environment facts on ORGS_FACTS, written with the change (the outbox) like membership facts. */
export interface EnvironmentFacts {
  memberChanged(tx: OrgsTx, fact: Fact<'internal.orgs.environment.member.changed'>): Promise<void>;
  deleted(tx: OrgsTx, fact: Fact<'internal.orgs.environment.deleted'>): Promise<void>;
  kick(): void;
}

/** What an environment holds, asked of the services that own it (an environment is deleted only empty). */
export interface EnvironmentContents {
  count(orgId: string, envId: string): Promise<{ inboxes: number; api_keys: number; webhook_endpoints: number; domains: number }>;
}
/**
 * Mail from the platform (work queue mail.system, sent by mail-send from the system address):
 * written in the transaction of the change it tells about, so a mail goes out for every
 * committed change and for none that rolled back.
 */
export interface SystemMailPort {
  queue(tx: OrgsTx, mail: SystemMail): Promise<void>;
}

/** An organization's name, read in the caller's transaction (for mails). */
export type OrgNameOf = (tx: OrgsTx, orgId: string) => Promise<string | undefined>;

/** A period of usage: start included, end excluded. */
export interface Period {
  start: Date;
  end: Date;
}

/**
 * The services that own what an organization's usage counts, each asked for its counts over
 * every environment of the organization. A service that does not answer rejects with
 * service_unavailable or gateway_timeout (libs/messaging).
 */
export interface UsageOwners {
  mailbox(orgId: string): Promise<{ inboxes: number }>;
  /** The period's messages, from the rollups of the events (a few seconds behind them). */
  metrics(orgId: string, period: Period): Promise<{ messages_sent: number; messages_received: number }>;
  webhooks(orgId: string): Promise<{ webhook_endpoints: number }>;
  domains(orgId: string): Promise<{ domains: number }>;
}
