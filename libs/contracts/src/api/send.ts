/** HTTP and RPC shapes of sending: replies, pre-send checks, the suppression list. */
import { z } from 'zod';
import { emailAddress } from '../address';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

/** Generous, yet below the gateway's body limit: a reply is text, attachments come with /send. */
const BODY_MAX = 512 * 1024;

/**
 * The largest message that can be sent, bodies and attachments together (decoded), unless
 * SEND_MAX_MESSAGE_BYTES says otherwise: 25 MB, as Mailgun; larger files go as links.
 */
export const SEND_MAX_MESSAGE_BYTES_DEFAULT = 25 * 1024 * 1024;
/** How long an upload (POST /api/v1/attachments) can be referred to by a send. */
export const UPLOAD_LIFETIME_MS = 24 * 3_600_000;

export const attachmentFilename = z.string().trim().min(1).max(255).regex(/^[^\r\n\\/]*$/, 'a file name, without path or line breaks');
export const attachmentContentType = z
  .string()
  .regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i, 'a MIME type such as application/pdf')
  .transform((v) => v.toLowerCase());

/** An upload, by the id POST /api/v1/attachments answered. */
export const attachmentReference = z.strictObject({ attachment_id: idSchema('attachment') });

/** What the gateway stored in the uploads bucket, for mailbox to record (size and digest are read from the store). */
export const uploadRegisterRequest = z.object({ object: idSchema('attachment'), filename: attachmentFilename, content_type: attachmentContentType });
export const uploadedAttachment = z.object({
  attachment_id: idSchema('attachment'),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().nonnegative(),
  /** Lowercase hex SHA-256 of the bytes, as the object store computed it. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  expires_at: isoTimestamp,
});

export const attachmentUpload = z.strictObject({
  filename: attachmentFilename,
  /** Absent: guessed from the file name's extension (application/octet-stream when unknown). */
  content_type: attachmentContentType.optional(),
  content_base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
});

/**
 * A file the server fetches when the send is made (the gateway, through the SSRF guard, within
 * a deadline and SEND_MAX_MESSAGE_BYTES); the file name defaults to the URL's last path
 * segment, the content type to the one the server answers with.
 */
export const attachmentUrl = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
  filename: attachmentFilename.optional(),
  content_type: attachmentContentType.optional(),
});
export type AttachmentUrl = z.output<typeof attachmentUrl>;

/** Attachments of a send: inline base64 (small files), uploads by id, or files by URL. */
export const sendAttachments = z.array(z.union([attachmentUpload, attachmentReference, attachmentUrl])).max(20);
export type SendAttachment = z.output<typeof sendAttachments>[number];

/** A reply's content: text, HTML or both (an empty text_body with HTML is an HTML-only reply, as with /send). */
export const replyRequest = z
  .strictObject({
    text_body: z.string().max(BODY_MAX),
    html_body: z.string().max(BODY_MAX).optional(),
    attachments: sendAttachments.optional(),
  })
  .superRefine((r, ctx) => {
    if (!r.text_body && !r.html_body) ctx.addIssue({ code: 'custom', path: ['text_body'], message: 'give text_body, html_body or both' });
  });

export const sentMessageRef = z.object({ message_id: idSchema('message'), thread_id: idSchema('thread') });

/** Recipients of one message, To, Cc and Bcc together. */
export const MAX_RECIPIENTS = 50;
/**
 * Attachments sent inline (content_base64), decoded, all together. Bounded by NATS's 1 MB
 * message size on the way from the gateway to the mailbox service; larger files are
 * uploaded first (POST /api/v1/attachments) and referred to by id.
 */
export const MAX_ATTACHMENT_BYTES = 512 * 1024;

const recipients = z.union([emailAddress.transform((r) => [r]), z.array(emailAddress).max(MAX_RECIPIENTS)]);
const someRecipients = z.union([emailAddress.transform((r) => [r]), z.array(emailAddress).min(1, 'at least one recipient').max(MAX_RECIPIENTS)]);

/** Custom headers: X- names only (the service sets the standard ones), values on one line. */
const headers = z
  .record(z.string().regex(/^X-[A-Za-z0-9-]{1,60}$/, 'custom header names start with X- (letters, digits, -)'), z.string().max(998).regex(/^[^\r\n]*$/, 'header values are one line'))
  .refine((h) => Object.keys(h).length <= 20, 'at most 20 custom headers');


export const sendFields = z.strictObject({
  to: someRecipients,
  cc: recipients.optional(),
  bcc: recipients.optional(),
  subject: z.string().max(998).regex(/^[^\r\n]*$/, 'one line'),
  text_body: z.string().max(BODY_MAX).optional(),
  html_body: z.string().max(BODY_MAX).optional(),
  attachments: sendAttachments.optional(),
  headers: headers.optional(),
});

type SendShape = { to: string[]; cc?: string[] | undefined; bcc?: string[] | undefined; text_body?: string | undefined; html_body?: string | undefined };

/** Checks across fields: a body, and the recipient limit over to, cc and bcc together. */
export function checkSend(r: SendShape, ctx: z.RefinementCtx): void {
  if (!r.text_body && !r.html_body) ctx.addIssue({ code: 'custom', path: ['text_body'], message: 'give text_body, html_body or both' });
  const count = r.to.length + (r.cc?.length ?? 0) + (r.bcc?.length ?? 0);
  if (count > MAX_RECIPIENTS) ctx.addIssue({ code: 'custom', path: ['to'], message: `at most ${MAX_RECIPIENTS} recipients in all (to, cc, bcc)` });
}

export const sendRequest = sendFields.superRefine(checkSend);

export const replyAllRequest = replyRequest;

export const forwardRequest = z.strictObject({
  to: someRecipients,
  text_body: z.string().max(BODY_MAX).optional(),
  /** Added to the original's attachments. */
  attachments: sendAttachments.optional(),
});


export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'manual'] as const;

export const suppression = z.object({
  address: z.string(),
  reason: z.enum(SUPPRESSION_REASONS),
  /** The message whose bounce or complaint put the address here; null when added by hand. */
  message_id: idSchema('message').nullable(),
  created_at: isoTimestamp,
});

export const suppressionCreateRequest = z.strictObject({ address: emailAddress });
export const suppressionAddress = z.object({ address: emailAddress });
export const suppressionList = pageOf(suppression);

/** What mailbox asks mail-send before it stores a message to send. */
export type SendCheckRequest = z.infer<typeof sendCheckRequest>;
export const sendCheckRequest = z.object({
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  inbox_id: idSchema('inbox'),
  inbox_status: z.enum(['active', 'paused']),
  from_address: z.string(),
  to_addresses: z.array(z.string()).min(1),
  subject: z.string(),
  /** The message the send will be: a send retried under its Idempotency-Key keeps its id and is counted toward the rates once. */
  message_id: idSchema('message').optional(),
});

/** An SNS message as POSTed to the provider endpoint (its signature is checked by mail-send). SNS caps messages at 256 KiB. */
export const snsNotificationRequest = z.object({ body: z.string().max(300 * 1024) });
