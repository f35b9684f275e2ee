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
import { accountMail, adminMail, systemMail } from './system-mail';

/**
 * Local part of our VERP envelope senders: `bounces+<id>-<mac>`, the id of a customer's
 * message (`msg_`) or of a mail from the platform itself (`sml_`). The SMTP edge routes mail
 * for it on the bounce domain to mail.feedback; mail-send checks the mac.
 */
export const VERP_LOCAL_PART = /^bounces\+((?:msg|sml)_[0-9a-z]{26})-([0-9a-z]{10})$/;

export const OBJECT_BUCKETS = {
  /** Raw messages received, byte for byte, named by raw id: written by mail-ingest alone. */
  raw: 'MAIL_RAW',
  /** Raw messages received that came inside their work item (small ones), written by mailbox alone. */
  received: 'MAIL_RECEIVED',
  /** Raw messages sent, as composed and signed, named by raw id: written by mail-send alone. */
  sent: 'MAIL_SENT',
  /** Decoded attachments, named by attachment id (derivable from the raw message). */
  attachments: 'MAIL_ATTACHMENTS',
  /** RPC replies too large for one NATS message (a message with megabytes of text), read once by their caller. */
  replies: 'RPC_REPLIES',
  /** Organization exports (zip archives), named by export id: written by admin alone, kept 7 days. */
  exports: 'ADMIN_EXPORTS',
  /** Uploads to send (POST /api/v1/attachments), named by attachment id: streamed in by the gateway, copied by mailbox into MAIL_ATTACHMENTS when sent; gone after 25 hours. */
  uploads: 'MAIL_UPLOADS',
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

const addressWithName = z.object({ address: z.string(), name: z.string().nullable() });

/**
 * The work item of `mail.outbound`: one stored outbound message for mail-send to compose,
 * sign and hand to the provider. Written by mailbox in the transaction that stores the
 * message (outbox), so a stored message is always sent and an unstored one never is.
 */
export const outboundJob = z.object({
  message_id: idSchema('message'),
  thread_id: idSchema('thread'),
  inbox_id: idSchema('inbox'),
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  /** Object of MAIL_RAW the composed message is stored as. */
  raw_id: z.string().regex(/^raw_[0-9a-z]{26}$/),
  /** RFC 5322 Message-ID, without angle brackets. */
  message_id_header: z.string().min(3),
  from: addressWithName,
  to: z.array(z.string()).min(1),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  subject: z.string(),
  text_body: z.string(),
  html_body: z.string().nullable(),
  in_reply_to: z.string().nullable(),
  references: z.array(z.string()),
  /** Attachments: objects of the MAIL_ATTACHMENTS bucket. */
  attachments: z
    .array(z.object({ object: z.string().min(1), filename: z.string().nullable(), content_type: z.string(), content_id: z.string().nullable() }))
    .default([]),
  /** Custom X- headers. */
  headers: z.record(z.string(), z.string()).default({}),
  created_at: isoTimestamp,
});
export type OutboundJob = z.infer<typeof outboundJob>;

/** The work item of `mail.feedback`: a report received at the bounce domain. */
export const feedbackMail = z.object({
  raw_id: z.string().regex(/^raw_[0-9a-z]{26}$/),
  received_at: isoTimestamp,
  mail_from: z.string(),
  /** The envelope recipients at the bounce domain: they carry the VERP token of our message. */
  rcpt_to: z.array(z.string()).min(1),
  /** The report, base64, when small enough to travel in the item; else it is object raw_id of MAIL_RAW. */
  raw: z.string().optional(),
});
export type FeedbackMail = z.infer<typeof feedbackMail>;

/** Catalog: work queue subject -> payload schema. */
export const WORK_ITEMS = {
  'mail.inbound': inboundMail,
  'mail.outbound': outboundJob,
  'mail.feedback': feedbackMail,
  'mail.system': systemMail,
  'mail.account': accountMail,
  'mail.admin': adminMail,
} as const;
