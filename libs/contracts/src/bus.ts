/**
 * Every NATS subject and stream name of the platform, defined once. Names here are
 * un-prefixed; libs/messaging applies the configured namespace. Do not rename a stream
 * or subject that has shipped: durable consumers and stored messages refer to it.
 */
import { z } from 'zod';
import { EVENT_TYPES, eventEnvelope, type EventType } from './events';
import { WORK_ITEMS } from './mail';
import { idSchema } from './ids';
import { isoTimestamp } from './time';
import { roleSchema } from './permissions';
import { auditEntry } from './api/audit';

export interface StreamSpec {
  subjects: string[];
  retention: 'limits' | 'workqueue' | 'interest';
  /** 0 = no age limit. */
  maxAgeSeconds: number;
  /** Window within which a repeated msgID is stored once. */
  duplicateWindowSeconds: number;
  description: string;
}

const DAY = 86_400;

export const STREAMS = {
  /** The spec's public events, kept 15 days so webhook recovery can read 14 days back. */
  EVENTS: {
    subjects: ['events.>'],
    retention: 'limits',
    maxAgeSeconds: 15 * DAY,
    duplicateWindowSeconds: 120,
    description: 'Public events of the spec, envelope as published to webhooks',
  },
  /** Facts of the auth service other services react to (revocations); short-lived. */
  AUTH_FACTS: {
    subjects: ['internal.auth.>'],
    retention: 'limits',
    maxAgeSeconds: 3_600,
    duplicateWindowSeconds: 120,
    description: 'Auth facts: session and API key revocations',
  },
  /**
   * Facts of the orgs service other services react to (membership changes, environments
   * deleted). Kept a week: the gateway replays only its last hour or so, but the owners of an
   * environment's resources consume its deletion with durable consumers, and a fact that ages
   * out before a service that was down reads it would leave that environment open there.
   */
  ORGS_FACTS: {
    subjects: ['internal.orgs.>'],
    retention: 'limits',
    maxAgeSeconds: 7 * DAY,
    duplicateWindowSeconds: 120,
    description: 'Orgs facts: members removed and roles changed, environments deleted',
  },
  /**
   * Facts of the domains service (a domain became verified, stopped being verified, or was
   * deleted, its catch-all changed), for mail-ingest to learn which custom domains take mail
   * and where unknown addresses go. Kept a week, like ORGS_FACTS.
   */
  DOMAINS_FACTS: {
    subjects: ['internal.domains.>'],
    retention: 'limits',
    maxAgeSeconds: 7 * DAY,
    duplicateWindowSeconds: 120,
    description: 'Domains facts: custom domains verified, no longer verified, deleted',
  },
  /**
   * Audit entries (issue 28): one subject per service that does audited actions
   * (`audit.<service>`), written through its outbox with the action, read by the admin
   * service into its year-long log. Kept 30 days, so an admin service down for weeks loses none.
   */
  AUDIT: {
    subjects: ['audit.>'],
    retention: 'limits',
    maxAgeSeconds: 30 * DAY,
    duplicateWindowSeconds: 120,
    description: 'Audit entries of admin and security-relevant tenant actions, for the admin service',
  },
  /** Work queue: accepted inbound mail, one item per SMTP transaction, consumed by mailbox. */
  MAIL_INBOUND: {
    subjects: ['mail.inbound'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: 'Accepted inbound mail awaiting parsing and storage (mailbox)',
  },
  /** Work queue: messages to send, one item per stored outbound message, consumed by mail-send. */
  MAIL_OUTBOUND: {
    subjects: ['mail.outbound'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: 'Outbound messages awaiting composition and hand-over to the provider (mail-send)',
  },
  /** Work queue: delivery and complaint reports received at the bounce domain, consumed by mail-send. */
  MAIL_FEEDBACK: {
    subjects: ['mail.feedback'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: 'DSN and ARF reports addressed to the bounce domain (mail-send)',
  },
  /** Work queue: mail from the platform itself (invitations, ownership transfers), consumed by mail-send. */
  MAIL_SYSTEM: {
    subjects: ['mail.system'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: 'Mail from the platform itself awaiting composition from a template and hand-over (mail-send)',
  },
  /** Work queue: mail about a person's account (verification codes, password resets), queued by auth, consumed by mail-send. */
  MAIL_ACCOUNT: {
    subjects: ['mail.account'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: 'Account mail from auth (verification, password reset) awaiting composition and hand-over (mail-send)',
  },
  /** Work queue: mail to the platform's operators (alerts), queued by admin, consumed by mail-send. */
  MAIL_ADMIN: {
    subjects: ['mail.admin'],
    retention: 'workqueue',
    maxAgeSeconds: 0,
    duplicateWindowSeconds: 600,
    description: "Mail to the platform's operators from admin (alerts) awaiting composition and hand-over (mail-send)",
  },
} as const satisfies Record<string, StreamSpec>;

/** Work queue subjects: one owner each. */
export const WORK = {
  inbound: 'mail.inbound',
  outbound: 'mail.outbound',
  feedback: 'mail.feedback',
  system: 'mail.system',
  account: 'mail.account',
  admin: 'mail.admin',
} as const;
export type WorkSubject = (typeof WORK)[keyof typeof WORK];
export const workSubjectSchema = z.enum([WORK.inbound, WORK.outbound, WORK.feedback, WORK.system, WORK.account, WORK.admin]);

export type StreamName = keyof typeof STREAMS;

export function eventSubject(type: EventType): string {
  return `events.${type}`;
}

export const ALL_EVENT_SUBJECTS = EVENT_TYPES.map(eventSubject);

/** Internal facts: subject -> payload schema. */
export const FACTS = {
  'internal.auth.session.revoked': z.object({
    session_id: idSchema('session'),
    user_id: idSchema('user'),
    /** After this instant no access token of the session can still be valid. */
    tokens_valid_until: isoTimestamp,
  }),
  'internal.auth.apikey.revoked': z.object({
    key_id: idSchema('apiKey'),
    org_id: idSchema('organization'),
  }),
  /** A person's membership changed: their role now, or null once they are no longer a member. */
  'internal.orgs.member.changed': z.object({
    org_id: idSchema('organization'),
    user_id: idSchema('user'),
    member_id: idSchema('member'),
    role: roleSchema.nullable(),
    changed_at: isoTimestamp,
  }),
  /** A person was given an environment (member: true) or had it taken away (false). */
  'internal.orgs.environment.member.changed': z.object({
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    user_id: idSchema('user'),
    member_id: idSchema('member'),
    member: z.boolean(),
    changed_at: isoTimestamp,
  }),
  /** An environment was deleted: nobody acts in it any more. */
  'internal.orgs.environment.deleted': z.object({
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    deleted_at: isoTimestamp,
  }),
  /**
   * A custom domain became verified, stopped being verified (a required record broke), had its
   * catch-all set or cleared, was deleted, or its DKIM key was rotated (a rotation's new record
   * verified: the new key signs now).
   */
  'internal.domains.domain.changed': z.object({
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    domain_id: idSchema('domain'),
    domain_name: z.string().min(1),
    state: z.enum(['verified', 'unverified', 'catch_all_changed', 'deleted', 'dkim_rotated']),
    changed_at: isoTimestamp,
  }),
  /** Audit entries of the services that do audited actions (AUDIT_ACTIONS names which may say which). */
  'audit.auth': auditEntry,
  'audit.orgs': auditEntry,
  'audit.domains': auditEntry,
} as const;

/** The audit subject of a service's entries. */
export type AuditSubject = Extract<FactSubject, `audit.${string}`>;

export type FactSubject = keyof typeof FACTS;
export type Fact<S extends FactSubject> = z.infer<(typeof FACTS)[S]>;

/**
 * What a durable consumer reads, by subject: the stream that holds it and the schema of its
 * messages. A consumer names the subject and gets the schema from here, never beside it.
 */
export const CONSUMABLE = {
  'mail.inbound': { stream: 'MAIL_INBOUND', schema: WORK_ITEMS['mail.inbound'] },
  'mail.outbound': { stream: 'MAIL_OUTBOUND', schema: WORK_ITEMS['mail.outbound'] },
  'mail.feedback': { stream: 'MAIL_FEEDBACK', schema: WORK_ITEMS['mail.feedback'] },
  'mail.system': { stream: 'MAIL_SYSTEM', schema: WORK_ITEMS['mail.system'] },
  'mail.account': { stream: 'MAIL_ACCOUNT', schema: WORK_ITEMS['mail.account'] },
  'mail.admin': { stream: 'MAIL_ADMIN', schema: WORK_ITEMS['mail.admin'] },
  /** Every public event (a consumer may filter to some: ConsumerOptions.filterSubject). */
  'events.>': { stream: 'EVENTS', schema: eventEnvelope },
  /** One fact of ORGS_FACTS: its consumers are filtered to it (contracts CONSUMERS). */
  'internal.orgs.environment.deleted': { stream: 'ORGS_FACTS', schema: FACTS['internal.orgs.environment.deleted'] },
  /** Every service's audit entries (the subject names the service). */
  'audit.>': { stream: 'AUDIT', schema: auditEntry },
} as const satisfies Record<string, { stream: StreamName; schema: z.ZodType }>;

export type ConsumableSubject = keyof typeof CONSUMABLE;
export type ConsumedPayload<S extends ConsumableSubject> = z.output<(typeof CONSUMABLE)[S]['schema']>;

/** The catalog seen per subject, so code generic in the subject parses to its own payload type. */
export const CONSUMED: { readonly [S in ConsumableSubject]: { stream: StreamName; schema: z.ZodType<ConsumedPayload<S>> } } = CONSUMABLE;
