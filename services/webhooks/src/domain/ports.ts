/** What the webhooks domain needs from outside it, as plain interfaces. */
import type { EventEnvelope } from '@mailroom/contracts';

export interface EventHistory {
  /**
   * Calls `onEvent` for every event of the durable event stream published from `since`
   * (within the stream's retention) up to `until`, oldest first.
   */
  read(since: Date, until: Date, onEvent: (event: EventEnvelope) => Promise<void> | void): Promise<void>;
}

/** Tells the dispatcher that deliveries were queued, so it looks now rather than at its next poll. */
export type WakeDispatcher = () => void;

/** An endpoint as it is now (its consecutive failed attempts too); undefined: deleted. */
export type EndpointNow = { url: string; disabled: boolean; consecutiveFailures: number } | undefined;

/**
 * Tells this instance's dispatcher that an endpoint changed, so the deliveries it has
 * queued for it follow at once (dropped when it is disabled or deleted, sent to its new
 * URL). Other instances learn it from their next record of that endpoint's attempts.
 */
export type EndpointChanged = (endpointId: string, now: EndpointNow) => void;
