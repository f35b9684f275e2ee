/**
 * The public events of the spec (section 6): the envelope and the `data` of each type,
 * field for field. Objects are strict: a field the spec does not list is an error, so a
 * producer cannot leak one (message.complained has no thread_id, message.rejected no message_id).
 */
import { z } from 'zod';
import { idSchema } from './ids';
import { isoTimestamp } from './time';

const address = z.string().min(1);

export const messageReceivedData = z.strictObject({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  from_address: z.string(),
  to_addresses: z.array(address),
  subject: z.string(),
  extracted_text: z.string(),
  has_attachments: z.boolean(),
  received_at: isoTimestamp,
});

export const messageSentData = z.strictObject({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  from_address: address,
  to_addresses: z.array(address),
  subject: z.string(),
  provider_message_id: z.string().min(1),
  sent_at: isoTimestamp,
});

export const messageDeliveredData = z.strictObject({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  to_addresses: z.array(address),
  delivered_at: isoTimestamp,
  processing_time_ms: z.number().int().nonnegative(),
});

export const BOUNCE_TYPES = ['Permanent', 'Transient'] as const;
export const BOUNCE_SUB_TYPES = ['General', 'NoEmail', 'Suppressed'] as const;

export const messageBouncedData = z.strictObject({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  bounce_type: z.enum(BOUNCE_TYPES),
  bounce_sub_type: z.enum(BOUNCE_SUB_TYPES),
  bounced_recipients: z.array(
    z.strictObject({
      email_address: address,
      status: z.string(),
      diagnostic_code: z.string(),
    }),
  ),
  bounced_at: isoTimestamp,
});

export const messageComplainedData = z.strictObject({
  message_id: idSchema('message'),
  inbox_id: idSchema('inbox'),
  complained_recipients: z.array(address),
  feedback_type: z.string(),
  complained_at: isoTimestamp,
});

export const REJECTION_REASONS = ['blocked_recipient', 'rate_limited', 'account_paused'] as const;

export const messageRejectedData = z.strictObject({
  inbox_id: idSchema('inbox'),
  from_address: address,
  to_addresses: z.array(address),
  subject: z.string(),
  rejection_reason: z.enum(REJECTION_REASONS),
  rejection_detail: z.string(),
  rejected_at: isoTimestamp,
});

export const domainVerifiedData = z.strictObject({
  domain_id: idSchema('domain'),
  domain_name: z.string().min(1),
  verification_status: z.literal('verified'),
  spf_status: z.string(),
  dkim_status: z.string(),
  dmarc_status: z.string(),
  verified_at: isoTimestamp,
});

/** Catalog: event type -> schema of its `data`. */
export const EVENT_DATA = {
  'message.received': messageReceivedData,
  'message.sent': messageSentData,
  'message.delivered': messageDeliveredData,
  'message.bounced': messageBouncedData,
  'message.complained': messageComplainedData,
  'message.rejected': messageRejectedData,
  'domain.verified': domainVerifiedData,
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export const eventTypeSchema = z.enum(EVENT_TYPES as [EventType, ...EventType[]]);
export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA)[T]>;

function envelopeOf<T extends EventType>(type: T) {
  return z.strictObject({
    id: idSchema('event'),
    type: z.literal(type),
    timestamp: isoTimestamp,
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    data: EVENT_DATA[type],
  });
}

export const eventEnvelope = z.discriminatedUnion('type', [
  envelopeOf('message.received'),
  envelopeOf('message.sent'),
  envelopeOf('message.delivered'),
  envelopeOf('message.bounced'),
  envelopeOf('message.complained'),
  envelopeOf('message.rejected'),
  envelopeOf('domain.verified'),
]);

export type EventEnvelope = z.infer<typeof eventEnvelope>;
export type EnvelopeOf<T extends EventType> = Extract<EventEnvelope, { type: T }>;
