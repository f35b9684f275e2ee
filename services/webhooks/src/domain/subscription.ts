/**
 * Which events an endpoint receives: those of its org and environment, of the types it
 * subscribes to (null: every type), and of the inboxes it is scoped to (null: every inbox,
 * and events of none such as domain.verified; scoped, an event of no inbox is not sent).
 * The fan-out statement (repo/delivery.repository.ts fanOut) applies the same rule in SQL.
 */
import type { EventEnvelope } from '@mailroom/contracts';

export interface Subscriber {
  org_id: string;
  env_id: string;
  event_types: readonly string[] | null;
  inbox_ids: readonly string[] | null;
}

export interface RoutedEvent {
  org_id: string;
  env_id: string;
  type: string;
  inbox_id: string | null;
}

/** The inbox an event is about, if any (message.* events carry one; domain.verified does not). */
export function inboxOf(envelope: EventEnvelope): string | null {
  const data: object = envelope.data;
  return 'inbox_id' in data && typeof data.inbox_id === 'string' ? data.inbox_id : null;
}

export function subscribes(endpoint: Subscriber, event: RoutedEvent): boolean {
  if (event.org_id !== endpoint.org_id || event.env_id !== endpoint.env_id) return false;
  if (endpoint.event_types !== null && !endpoint.event_types.includes(event.type)) return false;
  if (endpoint.inbox_ids === null) return true;
  return event.inbox_id !== null && endpoint.inbox_ids.includes(event.inbox_id);
}
