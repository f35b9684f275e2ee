/** HTTP and RPC shapes of inboxes, messages, threads, attachments and labels. */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf, pageQuery } from '../pagination';
import { isoTimestamp } from '../time';

/** Local part of an inbox address: lower-case letters, digits and . _ - (no leading, trailing or double dot). */
export const USERNAME_PATTERN = /^(?!\.)(?!.*\.\.)[a-z0-9._-]{1,64}(?<!\.)$/;
export const DOMAIN_PATTERN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;

export const INBOX_STATUSES = ['active', 'paused'] as const;

export const inbox = z.object({
  inbox_id: idSchema('inbox'),
  address: z.string(),
  display_name: z.string().nullable(),
  status: z.enum(INBOX_STATUSES),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type Inbox = z.infer<typeof inbox>;

const lower = (schema: z.ZodString) => z.string().trim().toLowerCase().pipe(schema);

export const inboxCreateRequest = z.strictObject({
  username: lower(z.string().regex(USERNAME_PATTERN, 'must be 1-64 of a-z 0-9 . _ - without leading, trailing or double dots')).optional(),
  domain: lower(z.string().regex(DOMAIN_PATTERN, 'must be a domain name')).optional(),
  display_name: z.string().trim().min(1).max(200).regex(/^[^\r\n"<>]*$/, 'must not contain quotes, angle brackets or line breaks').optional(),
});

export const inboxUpdateRequest = z.strictObject({
  display_name: inboxCreateRequest.shape.display_name.unwrap().nullable().optional(),
  status: z.enum(INBOX_STATUSES).optional(),
});

export const inboxId = z.object({ id: idSchema('inbox') });

/** SMTP RCPT lookup by the mail-ingest service. */
export const inboxResolution = z.object({
  inbox_id: idSchema('inbox'),
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  address: z.string(),
  status: z.enum(INBOX_STATUSES),
});

// ---- labels

export const SYSTEM_LABELS = ['spam', 'unauthenticated', 'sent', 'received'] as const;
/** System labels clients may add (flagging spam by hand); no system label can be removed by clients. */
export const CLIENT_ADDABLE_SYSTEM_LABELS = ['spam'] as const;
export const LABEL_PATTERN = /^[a-z0-9][a-z0-9._:/-]{0,63}$/;
export const label = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.string().regex(LABEL_PATTERN, 'must be 1-64 of a-z 0-9 . _ : / - starting with a letter or digit'));
export const labelsBody = z.strictObject({ labels: z.array(label).min(1).max(20) });

// ---- messages

export const authVerdict = z.object({
  result: z.enum(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror', 'policy']),
  details: z.string().optional(),
});
export type AuthVerdict = z.infer<typeof authVerdict>;

export const authResults = z.object({ spf: authVerdict, dkim: authVerdict, dmarc: authVerdict, arc: authVerdict });
export type AuthResults = z.infer<typeof authResults>;

export const SPAM_VERDICTS = ['ham', 'spam', 'unscanned'] as const;
export const spamResult = z.object({
  /** rspamd score; null when unscanned. */
  score: z.number().nullable(),
  verdict: z.enum(SPAM_VERDICTS),
});
export type SpamResult = z.infer<typeof spamResult>;

export const attachmentSummary = z.object({
  attachment_id: idSchema('attachment'),
  filename: z.string().nullable(),
  content_type: z.string(),
  size: z.number().int().nonnegative(),
  /** A signed link to the bytes that needs no Authorization header, until the message's download_urls_expire_at (added by the gateway). */
  download_url: z.string().optional(),
});

export const message = z.object({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  from_address: z.string(),
  to_addresses: z.array(z.string()),
  cc_addresses: z.array(z.string()),
  subject: z.string(),
  /** The new text without quoted history and signature; absent when it could not be computed. */
  extracted_text: z.string().optional(),
  /** The HTML part without quoted history, sanitized; absent without an HTML part. Not in message.received. */
  extracted_html: z.string().optional(),
  text_body: z.string(),
  html_body: z.string(),
  labels: z.array(z.string()),
  attachments: z.array(attachmentSummary),
  in_reply_to: z.string().nullable(),
  references: z.array(z.string()),
  created_at: isoTimestamp,
  received_at: isoTimestamp,
  auth: authResults,
  spam: spamResult,
  /** A signed link to the raw message (message/rfc822) that needs no Authorization header (added by the gateway). */
  raw_download_url: z.string().optional(),
  /** When raw_download_url and the attachments' download_url stop working. */
  download_urls_expire_at: isoTimestamp.optional(),
});
export type Message = z.infer<typeof message>;

export const messageSummary = message
  .pick({ message_id: true, thread_id: true, inbox_id: true, from_address: true, to_addresses: true, cc_addresses: true, subject: true, labels: true, created_at: true, received_at: true })
  .extend({ preview: z.string(), has_attachments: z.boolean() });

const timeFilter = isoTimestamp.or(z.iso.datetime({ offset: true })).transform((v) => new Date(v).toISOString());

export const messageListRequest = pageQuery.extend({
  inbox_id: idSchema('inbox'),
  label: label.optional(),
  before: timeFilter.optional(),
  after: timeFilter.optional(),
});
export const messageList = pageOf(messageSummary);

export const messageRef = z.object({ inbox_id: idSchema('inbox'), message_id: idSchema('message') });

/** What a signed download link opens (the gateway verified it): the raw message, or one attachment. */
export const signedDownloadRequest = messageRef.extend({ attachment_id: idSchema('attachment').nullable() });

/** A stored object the gateway streams to the client after the owner authorised it. */
export const download = z.object({
  bucket: z.enum(['raw', 'received', 'sent', 'attachments', 'exports']),
  object: z.string().min(1),
  content_type: z.string(),
  filename: z.string().nullable(),
  size: z.number().int().nonnegative(),
});

export const thread = z.object({
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  subject: z.string(),
  message_count: z.number().int().nonnegative(),
  labels: z.array(z.string()),
  preview: z.string(),
  last_message_at: isoTimestamp,
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export const threadWithMessages = thread.extend({ messages: z.array(message) });
export const threadListRequest = pageQuery.extend({ inbox_id: idSchema('inbox'), label: label.optional() });
export const threadList = pageOf(thread);
export const threadRef = z.object({ inbox_id: idSchema('inbox'), thread_id: idSchema('thread') });

export const labelBatchRequest = z.strictObject({
  message_ids: z.array(idSchema('message')).min(1).max(100),
  add: z.array(label).max(20).optional(),
  remove: z.array(label).max(20).optional(),
});

export const labelList = pageOf(z.object({ label: z.string(), message_count: z.number().int(), system: z.boolean() }));
