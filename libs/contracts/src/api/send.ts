/** HTTP and RPC shapes of sending: replies, pre-send checks, the suppression list. */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

/** Generous, yet below the gateway's body limit: a reply is text, attachments come with /send. */
const BODY_MAX = 512 * 1024;

export const replyRequest = z.strictObject({
  text_body: z.string().min(1, 'must not be empty').max(BODY_MAX),
  html_body: z.string().max(BODY_MAX).optional(),
});

export const sentMessageRef = z.object({ message_id: idSchema('message'), thread_id: idSchema('thread') });

const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email('must be an email address'))
  .transform((v) => v.toLowerCase());

export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'manual'] as const;

export const suppression = z.object({
  address: z.string(),
  reason: z.enum(SUPPRESSION_REASONS),
  /** The message whose bounce or complaint put the address here; null when added by hand. */
  message_id: idSchema('message').nullable(),
  created_at: isoTimestamp,
});

export const suppressionCreateRequest = z.strictObject({ address: email });
export const suppressionAddress = z.object({ address: email });
export const suppressionList = pageOf(suppression);

/** What mailbox asks mail-send before it stores a message to send. */
export const sendCheckRequest = z.object({
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  inbox_id: idSchema('inbox'),
  inbox_status: z.enum(['active', 'paused']),
  from_address: z.string(),
  to_addresses: z.array(z.string()).min(1),
  subject: z.string(),
});
