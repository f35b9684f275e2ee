/** What the webhooks domain needs from outside it, as plain interfaces. */
import type { EnvironmentTombstones, EventSink as EventSinkOf, Transact as TransactOf } from '@mailroom/platform';
import type { WebhooksTx } from '../repo/tables';
import type { EventEnvelope, OrganizationLimits, Tenant } from '@mailroom/contracts';

export interface EventHistory {
  /**
   * Calls `onEvent` for every message of the durable event stream from `from` (a stream
   * sequence, or the first message published at or after a time, within the stream's
   * retention) to the last published at or before `until`, oldest first, with its stream
   * sequence and the traceparent it was published in (null: none, or telemetry off);
   * `event` is undefined for a message that is not a valid envelope. Returns
   * when it has read them all, or soon after `signal` aborts; an error of `onEvent` ends it.
   */
  read(
    from: { seq: number } | { time: Date },
    until: Date,
    onEvent: (event: EventEnvelope | undefined, seq: number, traceparent: string | null) => Promise<void> | void,
    signal?: AbortSignal,
  ): Promise<void>;
}

/**
 * Tells the dispatcher that deliveries were queued for an endpoint, so it looks now rather
 * than at its next poll (and so do the other instances, if this one has none of its slots).
 */
export type WakeDispatcher = (endpointId: string) => void;

/** An endpoint as it is now (its consecutive failed attempts too); undefined: deleted. */
export type EndpointNow = { url: string; disabled: boolean; consecutiveFailures: number } | undefined;

/**
 * Tells this instance's dispatcher that an endpoint changed, so the deliveries it has
 * queued for it follow at once (dropped when it is disabled or deleted, sent to its new
 * URL). Other instances learn it from their next record of that endpoint's attempts.
 */
export type EndpointChanged = (endpointId: string, now: EndpointNow) => void;

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<WebhooksTx>;
/** Events and work items written with a transaction, published after it (libs/runtime `Outbox`). */
export type EventSink = EventSinkOf<WebhooksTx>;
/** An organization's plan and what it may hold, asked of orgs (orgs.organization.limits). */
export interface PlanLimitsPort {
  of(orgId: string): Promise<OrganizationLimits>;
}
/** Inboxes, asked of mailbox (mailbox.inbox.ofEnvironment). */
export interface InboxesPort {
  /** Whether the inbox is one of the tenant's environment. */
  inEnvironment(t: Tenant, inboxId: string): Promise<boolean>;
}
/** Environments orgs deleted, recorded in this schema (libs/runtime `DeletedEnvironments`). */
export type DeletedEnvironments = EnvironmentTombstones<WebhooksTx>;
