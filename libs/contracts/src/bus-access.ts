/**
 * Who may do what on the bus: for every identity that connects to NATS, the RPC operations
 * it calls, the stream subjects it publishes, the durable consumers it reads with, the
 * streams it follows, the object and KV buckets it reads or writes. libs/messaging turns
 * this table into NATS permissions (subjects and JetStream API subjects); nothing else
 * grants access. What an identity serves is not written here: a service serves exactly
 * its own operations (rpc.ts). bus-access.spec.ts fails when a subject, stream, consumer
 * or bucket of the catalog has no entry.
 */
import { FACTS, WORK, eventSubject, type StreamName } from './bus';
import { EVENT_TYPES } from './events';
import { RPC, type RpcName } from './rpc';
import { type OBJECT_BUCKETS } from './mail';

/** Key-value buckets (JetStream KV), by catalog name. */
export const KV_BUCKETS = {
  /** The gateway's Idempotency-Key records: a replayed request within a day gets the first answer. */
  idempotency: { name: 'IDEMPOTENCY', ttlSeconds: 24 * 3_600, history: 1 },
} as const;
export type KvBucketName = keyof typeof KV_BUCKETS;
export type ObjectBucketName = keyof typeof OBJECT_BUCKETS;

export interface ConsumerSpec {
  stream: StreamName;
  /**
   * The one subject (un-prefixed) it reads of its stream, when not all of them: the consumer
   * is made with this filter, and its identity holds the seal key of this subject alone.
   */
  filter?: string;
}

/** Durable consumers: name -> the stream it reads and an optional filter. */
export const CONSUMERS = {
  'mailbox--inbound': { stream: 'MAIL_INBOUND' },
  'mail-send--outbound': { stream: 'MAIL_OUTBOUND' },
  'mail-send--feedback': { stream: 'MAIL_FEEDBACK' },
  'mail-send--system': { stream: 'MAIL_SYSTEM' },
  'mail-send--account': { stream: 'MAIL_ACCOUNT' },
  // Alerts to the operators (issue 28, part 3).
  'mail-send--admin': { stream: 'MAIL_ADMIN' },
  'webhooks--dispatch': { stream: 'EVENTS' },
  // The owners of what an environment holds remove it when the environment is deleted.
  'auth--environment-deleted': { stream: 'ORGS_FACTS', filter: 'internal.orgs.environment.deleted' },
  'mailbox--environment-deleted': { stream: 'ORGS_FACTS', filter: 'internal.orgs.environment.deleted' },
  'webhooks--environment-deleted': { stream: 'ORGS_FACTS', filter: 'internal.orgs.environment.deleted' },
  'domains--environment-deleted': { stream: 'ORGS_FACTS', filter: 'internal.orgs.environment.deleted' },
  // Every public event, counted once into the hourly rollups (issue 27).
  'metrics--rollup': { stream: 'EVENTS' },
  // A deleted environment's rollups are deleted (issue 27).
  'metrics--environment-deleted': { stream: 'ORGS_FACTS', filter: 'internal.orgs.environment.deleted' },
  // Every service's audit entries, kept a year in the admin service's log (issue 28).
  'admin--audit': { stream: 'AUDIT' },
} as const satisfies Record<string, ConsumerSpec>;
export type ConsumerName = keyof typeof CONSUMERS;

const CONSUMER_SPECS = new Map<string, ConsumerSpec>(Object.entries(CONSUMERS));

/** The catalogued filter of a durable consumer; undefined for one that reads its whole stream, or one not catalogued. */
export function consumerFilter(durable: string): string | undefined {
  return CONSUMER_SPECS.get(durable)?.filter;
}

export const BUS_IDENTITIES = ['orgs', 'auth', 'mailbox', 'mail-ingest', 'mail-send', 'webhooks', 'domains', 'metrics', 'admin', 'gateway', 'migrate'] as const;
export type BusIdentity = (typeof BUS_IDENTITIES)[number];

export interface BusAccess {
  /** RPC operations it calls. */
  calls: readonly RpcName[];
  /** Subjects of streams it publishes (events, work items, facts). */
  publishes: readonly string[];
  /** Durable consumers it reads with (and creates). */
  consumes: readonly ConsumerName[];
  /** Streams it reads from a point in time with ordered consumers it makes and drops. */
  follows: readonly StreamName[];
  buckets: Partial<Record<ObjectBucketName, 'read' | 'write'>>;
  kv: readonly KvBucketName[];
  /** Creates and updates every stream and bucket of the catalog (the migrate step), nothing else. */
  provisions?: true;
  /**
   * Watches the platform (admin's health): sends the discovery ping every instance answers
   * (contracts DISCOVERY_SUBJECT) and reads the info of every stream and durable consumer.
   */
  monitors?: true;
}

/** Operations only services call: no route of the gateway reaches them. */
export const SERVICE_ONLY_OPERATIONS = [
  'auth.user.profiles',
  'auth.apikey.countInEnvironment',
  'orgs.organization.createForOwner',
  'orgs.membership.listForUser',
  'orgs.environment.get',
  'orgs.organization.limits',
  'mailbox.inbox.resolve',
  'mailbox.inbox.countInEnvironment',
  'mailbox.usage.count',
  'mail-send.outbound.check',
  'webhooks.endpoint.countInEnvironment',
  'webhooks.usage.count',
  'orgs.membership.owned',
  'orgs.membership.purgeUser',
  'domains.domain.countInEnvironment',
  'domains.usage.count',
  'mailbox.inbox.listOnDomain',
  'metrics.usage.count',
  'domains.domain.route',
  'domains.domain.status',
  'mailbox.inbox.ofEnvironment',
  // mail-send signs a custom domain's mail with its key (issue 25, part 7).
  'domains.domain.signingKey',
  // Single sign-on's just-in-time members (issue 26).
  'orgs.membership.addForSso',
  'domains.domain.verifiedNames',
  // Organization exports: each service's own rows, for the admin service alone (issue 28, part 4).
  'orgs.export.page',
  'auth.export.page',
  'mailbox.export.page',
  'webhooks.export.page',
  'domains.export.page',
  // The platform's rates and counts for admin's alerts (issue 28, part 3).
  'metrics.platform.mail',
  'webhooks.endpoint.countAutoDisabled',
  'domains.domain.countFailed',
] as const satisfies readonly RpcName[];

const SERVICE_ONLY = new Set<string>(SERVICE_ONLY_OPERATIONS);
const RPC_NAMES = Object.keys(RPC) as RpcName[];

const NONE = { calls: [], publishes: [], consumes: [], follows: [], buckets: {}, kv: [] } as const satisfies BusAccess;

export const BUS_ACCESS = {
  orgs: {
    ...NONE,
    calls: [
      'auth.user.profiles',
      'mailbox.inbox.countInEnvironment',
      'auth.apikey.countInEnvironment',
      'webhooks.endpoint.countInEnvironment',
      'mailbox.usage.count',
      'webhooks.usage.count',
      'domains.domain.countInEnvironment',
      'domains.usage.count',
      // The messages of a period from the metrics rollups (issue 27, part 5).
      'metrics.usage.count',
    ],
    publishes: ['internal.orgs.member.changed', 'internal.orgs.environment.member.changed', 'internal.orgs.environment.deleted', 'mail.system', 'audit.orgs'],
    buckets: { replies: 'write' },
  },
  auth: {
    ...NONE,
    // orgs.membership.owned and purgeUser: a person's deletion and purge.
    calls: ['orgs.organization.createForOwner', 'orgs.membership.listForUser', 'orgs.organization.get', 'orgs.environment.get', 'orgs.membership.owned', 'orgs.membership.purgeUser', 'orgs.membership.addForSso', 'domains.domain.verifiedNames'],
    publishes: ['internal.auth.session.revoked', 'internal.auth.apikey.revoked', 'mail.account', 'audit.auth'],
    consumes: ['auth--environment-deleted'],
    buckets: { replies: 'write' },
  },
  mailbox: {
    ...NONE,
    // orgs.environment.get: a deletion fact is believed once orgs no longer knows the environment.
    // domains.domain.status: an inbox on a custom domain is created once the domain is verified.
    calls: ['mail-send.outbound.check', 'orgs.organization.limits', 'orgs.environment.get', 'domains.domain.status'],
    publishes: [eventSubject('message.received'), 'mail.outbound'],
    consumes: ['mailbox--inbound', 'mailbox--environment-deleted'],
    // Reads what mail-ingest stored; writes the small raws that came inside their work item.
    // Uploads: recorded (size and digest read from the store) and copied into attachments when sent.
    buckets: { raw: 'read', received: 'write', attachments: 'write', replies: 'write', uploads: 'read' },
  },
  'mail-ingest': {
    ...NONE,
    // domains.domain.route: which custom domains it takes mail for, and their catch-all; forgotten when DOMAINS_FACTS says a domain changed.
    calls: ['mailbox.inbox.resolve', 'domains.domain.route'],
    publishes: ['mail.inbound', 'mail.feedback'],
    follows: ['DOMAINS_FACTS'],
    buckets: { raw: 'write' },
  },
  'mail-send': {
    ...NONE,
    calls: [
      'orgs.organization.get',
      // A custom domain's key and standing; DOMAINS_FACTS drops what it cached of a domain that changed (issue 25, part 7).
      'domains.domain.signingKey',
    ],
    follows: ['DOMAINS_FACTS'],
    publishes: (['message.sent', 'message.delivered', 'message.bounced', 'message.complained', 'message.rejected'] as const).map(eventSubject),
    consumes: ['mail-send--outbound', 'mail-send--feedback', 'mail-send--system', 'mail-send--account', 'mail-send--admin'],
    // Reads what mail-ingest received (reports), writes what it sends.
    buckets: { raw: 'read', sent: 'write', attachments: 'read', replies: 'write' },
  },
  webhooks: {
    ...NONE,
    // mailbox.inbox.ofEnvironment: an endpoint is scoped only to inboxes of its environment (issue 30).
    calls: ['orgs.organization.limits', 'orgs.environment.get', 'mailbox.inbox.ofEnvironment'],
    consumes: ['webhooks--dispatch', 'webhooks--environment-deleted'],
    follows: ['EVENTS'],
    buckets: { replies: 'write' },
  },
  domains: {
    ...NONE,
    // mailbox.inbox.listOnDomain: a domain is deleted only when no inbox uses it.
    // mailbox.inbox.ofEnvironment: a catch-all is an inbox on the domain, in its environment.
    calls: ['orgs.organization.limits', 'orgs.environment.get', 'mailbox.inbox.listOnDomain', 'mailbox.inbox.ofEnvironment'],
    publishes: [eventSubject('domain.verified'), 'internal.domains.domain.changed', 'audit.domains'],
    consumes: ['domains--environment-deleted'],
    buckets: { replies: 'write' },
  },
  // The rollups of the public events; its replay command (cli.ts) reads EVENTS from the start.
  metrics: {
    ...NONE,
    // orgs.environment.get: a deletion fact is believed once orgs no longer knows the environment.
    // mailbox.inbox.ofEnvironment, domains.domain.status: the custom domain of an inbox, asked once per inbox (per-domain rollups).
    calls: ['orgs.environment.get', 'mailbox.inbox.ofEnvironment', 'domains.domain.status'],
    consumes: ['metrics--rollup', 'metrics--environment-deleted'],
    follows: ['EVENTS'],
    buckets: { replies: 'write' },
  },
  admin: {
    ...NONE,
    consumes: ['admin--audit'],
    monitors: true,
    // Alerts mailed to the operators.
    publishes: ['mail.admin'],
    // Organization exports: whether the organization exists, each service's rows, the members' names and emails.
    // Alerts: mail rates, auto-disabled endpoints, failing domains.
    calls: ['orgs.organization.get', 'orgs.export.page', 'auth.export.page', 'mailbox.export.page', 'webhooks.export.page', 'domains.export.page', 'auth.user.profiles', 'metrics.platform.mail', 'webhooks.endpoint.countAutoDisabled', 'domains.domain.countFailed'],
    // Reads the messages and attachments it exports, writes the archives.
    buckets: { replies: 'write', raw: 'read', received: 'read', sent: 'read', attachments: 'read', exports: 'write' },
  },
  gateway: {
    ...NONE,
    // Tenant operations, and the admin ones (orgs.upgrade.decide) it seals admin keys' contexts for.
    calls: RPC_NAMES.filter((name) => !SERVICE_ONLY.has(name)),
    follows: ['AUTH_FACTS', 'ORGS_FACTS'],
    // Replies: read, then deleted (its lifetime would remove it otherwise).
    // Uploads: streamed in from the client (POST /api/v1/attachments), never read back.
    buckets: { raw: 'read', received: 'read', sent: 'read', attachments: 'read', replies: 'write', exports: 'read', uploads: 'write' },
    kv: ['idempotency'],
  },
  migrate: { ...NONE, provisions: true },
} as const satisfies Record<BusIdentity, BusAccess>;

/**
 * Subjects of the catalog nobody publishes yet, with the reason: the coverage test accepts
 * these and nothing else without a publisher.
 */
export const UNPUBLISHED: Record<string, string> = {};

/**
 * Streams nobody reads yet, with the reason: the coverage test accepts these and nothing else
 * without a reader.
 */
export const UNREAD_STREAMS: Partial<Record<StreamName, string>> = {};

/** Every subject the catalog's streams store, one by one (each event type, fact and work item). */
export const PUBLISHED_SUBJECTS: readonly string[] = [...EVENT_TYPES.map(eventSubject), ...Object.keys(FACTS), ...Object.values(WORK)];
