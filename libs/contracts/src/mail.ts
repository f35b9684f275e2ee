/**
 * The work item of the `mail.inbound` queue: one accepted SMTP transaction with the verdicts
 * the SMTP edge reached. The raw bytes are durable before the sender hears 250 either way:
 * a small message travels inside the item (`raw`, base64; JetStream stores it), and mailbox
 * writes it to the MAIL_RAW bucket as object `raw_id`; a larger one is written there by the
 * edge first. The mailbox service turns the item into one stored message per recipient inbox.
 */
import { z } from 'zod';
import { authResults, spamResult } from './api/mailbox';
import { idSchema } from './ids';
import { isoTimestamp } from './time';

export const OBJECT_BUCKETS = {
  /** Raw messages, byte for byte, named by raw id. */
  raw: 'MAIL_RAW',
  /** Decoded attachments, named by attachment id (derivable from the raw message). */
  attachments: 'MAIL_ATTACHMENTS',
} as const;

export const inboundMail = z.object({
  raw_id: z.string().regex(/^raw_[0-9a-z]{26}$/),
  size: z.number().int().positive(),
  received_at: isoTimestamp,
  client: z.object({ ip: z.string(), helo: z.string(), tls: z.boolean() }),
  /** Envelope sender (MAIL FROM); empty for the null sender of bounces. */
  mail_from: z.string(),
  recipients: z
    .array(
      z.object({
        address: z.string(),
        inbox_id: idSchema('inbox'),
        org_id: idSchema('organization'),
        env_id: idSchema('environment'),
      }),
    )
    .min(1),
  auth: authResults,
  spam: spamResult,
  /** The raw message, base64, when small enough to travel in the item; else it is object raw_id already. */
  raw: z.string().optional(),
});
export type InboundMail = z.infer<typeof inboundMail>;
