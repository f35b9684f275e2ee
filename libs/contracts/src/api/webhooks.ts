/**
 * HTTP and RPC shapes of webhook endpoints and their delivery records (spec sections 2, 4
 * and 6). `events` omitted at creation subscribes the endpoint to every event type,
 * including types added later; the answer then lists every type known today.
 */
import { z } from 'zod';
import { eventTypeSchema } from '../events';
import { idSchema } from '../ids';
import { pageOf, pageQuery } from '../pagination';
import { isoTimestamp } from '../time';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
/** Inboxes one endpoint can be scoped to. */
export const WEBHOOK_INBOX_IDS_MAX = 100;
/** Longest window of POST .../recover. */
export const WEBHOOK_RECOVER_MAX_DAYS = 14;

export const DELIVERY_STATUSES = ['delivered', 'failed'] as const;
export const DELIVERY_TRIGGERS = ['scheduled', 'manual'] as const;

const url = z.string().trim().min(1).max(WEBHOOK_URL_MAX_LENGTH);
const eventList = z
  .array(eventTypeSchema)
  .min(1, 'list at least one event type, or omit events to receive every type')
  .max(64)
  .transform((types) => [...new Set(types)]);
const description = z.string().trim().max(WEBHOOK_DESCRIPTION_MAX_LENGTH);
/** Inboxes of the caller's environment; events of other inboxes, and events of none (domain.verified), are not sent. */
const inboxList = z
  .array(idSchema('inbox'))
  .min(1, 'list at least one inbox, or omit inbox_ids (null on update) to receive the events of every inbox and those of none')
  .max(WEBHOOK_INBOX_IDS_MAX)
  .transform((ids) => [...new Set(ids)]);

export const webhookEndpoint = z.object({
  id: idSchema('webhookEndpoint'),
  url: z.string(),
  events: z.array(eventTypeSchema),
  /** The inboxes whose events it receives; null: every inbox's, and the events of none (domain.verified). */
  inbox_ids: z.array(idSchema('inbox')).nullable(),
  description: z.string().nullable(),
  disabled: z.boolean(),
  /** Why the endpoint is disabled (auto-disable after 50 consecutive failures, or by a user); null when enabled. */
  disabled_reason: z.string().nullable(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type WebhookEndpoint = z.infer<typeof webhookEndpoint>;

/** The create answer: the only one that carries the secret. */
export const webhookEndpointCreated = webhookEndpoint.extend({ secret: z.string().startsWith('whsec_') });
export type WebhookEndpointCreated = z.infer<typeof webhookEndpointCreated>;

export const webhookEndpointCreateRequest = z.strictObject({
  url,
  events: eventList.optional(),
  description: description.optional(),
  inbox_ids: inboxList.optional(),
});

export const webhookEndpointUpdateBody = z.strictObject({
  url: url.optional(),
  /** null subscribes the endpoint to every event type again, including types added later. */
  events: eventList.nullable().optional(),
  /** null clears it. */
  description: description.nullable().optional(),
  /** false re-enables a disabled endpoint and resets its failure count; true disables it. */
  disabled: z.boolean().optional(),
  /** null: the events of every inbox again (and those of none). */
  inbox_ids: inboxList.nullable().optional(),
});

export const webhookEndpointId = z.object({ id: idSchema('webhookEndpoint') });
export const webhookEndpointUpdateRequest = webhookEndpointUpdateBody.extend(webhookEndpointId.shape);
export const webhookEndpointList = pageOf(webhookEndpoint);

export const webhookDelivery = z.object({
  id: idSchema('delivery'),
  event_id: idSchema('event'),
  event_type: eventTypeSchema,
  status: z.enum(DELIVERY_STATUSES),
  /** The receiver's HTTP status; 0 when there was no HTTP answer (timeout, refused, blocked). */
  http_status: z.number().int().min(0),
  /** Attempt number within this delivery: 1 for the first, up to 10 for scheduled retries. */
  attempt: z.number().int().positive(),
  trigger: z.enum(DELIVERY_TRIGGERS),
  /** Why the attempt failed: timeout, blocked_destination, non_2xx_status, redirect_not_followed, ... */
  error: z.string().optional(),
  duration_ms: z.number().int().min(0),
  created_at: isoTimestamp,
  /** When the next attempt of this delivery is due (absent when none is scheduled). */
  next_attempt_at: isoTimestamp.optional(),
  /** The first 4 KB of the receiver's answer, when it sent one. */
  response_body: z.string().optional(),
});
export type WebhookDelivery = z.infer<typeof webhookDelivery>;

export const webhookDeliveryList = pageOf(webhookDelivery);
export const webhookDeliveryListRequest = webhookEndpointId.extend(pageQuery.shape);

export const webhookRedeliverParams = z.object({ id: idSchema('webhookEndpoint'), delivery_id: idSchema('delivery') });
export const webhookRedeliverResponse = z.object({ endpoint_id: idSchema('webhookEndpoint'), event_id: idSchema('event') });

export const webhookRecoverBody = z.strictObject({
  since: isoTimestamp,
  /** Default: now. */
  until: isoTimestamp.optional(),
});
export const webhookRecoverRequest = webhookRecoverBody.extend(webhookEndpointId.shape);

export const RECOVERY_STATUSES = ['running', 'finished', 'failed'] as const;
/**
 * A recovery: the window's events read back from the event stream in the background (a
 * window can hold millions of events of every tenant), each one without a successful
 * delivery to the endpoint queued again. One runs per endpoint at a time.
 */
export const webhookRecovery = z.object({
  id: idSchema('recovery'),
  endpoint_id: idSchema('webhookEndpoint'),
  since: isoTimestamp,
  until: isoTimestamp,
  status: z.enum(RECOVERY_STATUSES),
  /** Events of the window queued for delivery again so far (all of them once finished). */
  queued: z.number().int().min(0),
  /** Why it failed (status failed). */
  error: z.string().optional(),
  created_at: isoTimestamp,
  finished_at: isoTimestamp.optional(),
});
export type WebhookRecovery = z.infer<typeof webhookRecovery>;
export const webhookRecoverResponse = webhookRecovery;
export const webhookRecoveryParams = z.object({ id: idSchema('webhookEndpoint'), recovery_id: idSchema('recovery') });
