/** What the mailbox domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { EnvironmentTombstones, EventSink as EventSinkOf, Transact as TransactOf } from '@mailroom/platform';
import type { DomainStatus, OrganizationLimits, Tenant } from '@mailroom/contracts';
import type { MailboxTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<MailboxTx>;
/** The bucket a message received whole inside its work item was written to (MAIL_RECEIVED), as opposed to mail-ingest's. */
export interface ReceivedRaws {
  has(rawId: string): Promise<boolean>;
}
/** Events and work items written with a transaction, published after it (libs/runtime `Outbox`). */
export type EventSink = EventSinkOf<MailboxTx>;
/** An organization's plan and what it may hold, asked of orgs (orgs.organization.limits). */
export interface PlanLimitsPort {
  of(orgId: string): Promise<OrganizationLimits>;
}
/** Environments orgs deleted, recorded in this schema (libs/runtime `DeletedEnvironments`). */
export type DeletedEnvironments = EnvironmentTombstones<MailboxTx>;
/** A custom domain of an environment by name, asked of domains (domains.domain.status); null when the environment has none of that name. */
export interface CustomDomainsPort {
  statusOf(t: Tenant, name: string): Promise<{ domain_name: string; verification_status: DomainStatus; failure_reason: string | null } | null>;
}
