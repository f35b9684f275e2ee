/**
 * HTTP and RPC shapes of custom domains (spec section 4, "Domains"; issue 25). A domain shows
 * the DNS records its owner publishes, each with what the last check found, and the state of
 * the whole: `pending` until every required record checks out, `verified` from then on
 * (`domain.verified` is emitted the first time), `failed` when a required record of a
 * verified domain broke. Names are checked and put in A-label form by the domains service
 * (IDNA, the public suffix list), not here: contracts depend on zod alone.
 */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

export const DOMAIN_NAME_INPUT_MAX = 300;
/** The label under a custom domain where VERP envelope senders live: `bounces.<domain>`, a CNAME to the platform's bounce domain. */
export const BOUNCE_LABEL = 'bounces';
export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
/** A record's state: not checked yet, found as it should be, found wrong or absent, or the lookup failed for now. */
export const RECORD_STATUSES = ['pending', 'verified', 'failed', 'temporary_failure'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];
/** Why a record is not verified: absent, present but not ours (`found` says what is there), or DNS did not answer. */
export const RECORD_REASONS = ['missing', 'mismatch', 'temporary_failure'] as const;
export type RecordReason = (typeof RECORD_REASONS)[number];
/**
 * The records of a domain, by what each is for. `dkim_next`: the key a rotation made
 * (`POST .../dkim/rotate`), listed beside the current one until its record verifies.
 */
export const RECORD_KINDS = ['mx', 'spf', 'dkim', 'dmarc', 'bounce', 'dkim_next'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];
export const RECORD_PURPOSES = ['receiving', 'sending', 'signing', 'policy', 'bounces'] as const;

export const domainRecord = z.object({
  /** Which record this is: mx, spf, dkim, dmarc, bounce, or dkim_next (a rotation's new key, until it verifies). */
  kind: z.enum(RECORD_KINDS),
  type: z.enum(['MX', 'TXT', 'CNAME']),
  /** The owner name, fully qualified, without the trailing dot. */
  name: z.string(),
  /** What to publish: the text of a TXT record (unquoted), the host of an MX or CNAME record. */
  value: z.string(),
  /** MX preference; null for other types. */
  priority: z.number().int().nullable(),
  purpose: z.enum(RECORD_PURPOSES),
  /** Whether verification needs it (SPF and DKIM); the others are recommended and reported. */
  required: z.boolean(),
  status: z.enum(RECORD_STATUSES),
  reason: z.enum(RECORD_REASONS).nullable(),
  /** What DNS answered at the name when it did not match (a mismatch). */
  found: z.array(z.string()),
  checked_at: isoTimestamp.nullable(),
});
export type DomainRecord = z.infer<typeof domainRecord>;

const recordStatus = z.enum(RECORD_STATUSES);

export const domain = z.object({
  domain_id: idSchema('domain'),
  /** In A-label form (IDNA), lower case, without the trailing dot. */
  domain_name: z.string(),
  verification_status: z.enum(DOMAIN_STATUSES),
  spf_status: recordStatus,
  dkim_status: recordStatus,
  dmarc_status: recordStatus,
  mx_status: recordStatus,
  bounce_status: recordStatus,
  /** Why the domain is not verified (pending or failed); null when verified. */
  failure_reason: z.string().nullable(),
  records: z.array(domainRecord),
  /** Where mail to unknown addresses of the domain goes (an inbox on the domain, same environment); null: such mail is refused at RCPT. */
  catch_all_inbox_id: idSchema('inbox').nullable(),
  created_at: isoTimestamp,
  /** When the domain last became verified; null if it never was. */
  verified_at: isoTimestamp.nullable(),
  last_checked_at: isoTimestamp.nullable(),
  /** When the verification job checks it next. */
  next_check_at: isoTimestamp,
});
export type Domain = z.infer<typeof domain>;

export const domainCreateBody = z.strictObject({
  domain_name: z.string().min(1, 'give a domain name, e.g. example.com').max(DOMAIN_NAME_INPUT_MAX),
});
export const domainId = z.object({ id: idSchema('domain') });
export const domainList = pageOf(domain);

/** A BIND zone fragment with every record of the domain, served as text/plain. */
export const zoneFile = z.object({
  content_type: z.literal('text/plain; charset=utf-8'),
  text: z.string(),
});

/** For services: an organization's domains (every environment), for its usage and plan. */
export const domainsUsage = z.object({ domains: z.number().int().nonnegative() });

/** For domains (services only): live inboxes of one environment on a domain name, which keep it from being deleted. */
export const inboxesOnDomainRequest = z.object({ org_id: idSchema('organization'), env_id: idSchema('environment'), domain: z.string().min(1).max(253) });
export const INBOXES_ON_DOMAIN_SHOWN = 10;
export const inboxesOnDomain = z.object({
  /** The first ones, oldest first. */
  data: z.array(z.object({ inbox_id: idSchema('inbox'), address: z.string() })),
  total: z.number().int().nonnegative(),
});

/** PATCH /domains/{id}/catch-all: the inbox that takes mail to unknown addresses of the domain, or null for none. */
export const catchAllBody = z.strictObject({
  inbox_id: idSchema('inbox').nullable(),
});

/** For mail-ingest (services only): whether the platform takes mail for a name, and the catch-all address there. */
export const domainRouteRequest = z.object({ domain_name: z.string().min(1).max(253) });
export const domainRoute = z.object({
  /** A custom domain that was verified and not deleted (a verified domain whose records broke still receives). */
  served: z.boolean(),
  /** The address of the catch-all inbox; null when unknown addresses are refused. */
  catch_all_address: z.string().nullable(),
  /** The organizations it is served for: an inbox of another organization on the name takes no mail there. */
  org_ids: z.array(idSchema('organization')),
});

/** For mailbox (services only): a domain of one environment by name, as inboxes need it. */
export const domainStatusRequest = z.object({ org_id: idSchema('organization'), env_id: idSchema('environment'), domain_name: z.string().min(1).max(253) });
export const domainStatus = z.object({
  domain_id: idSchema('domain'),
  /** In A-label form, lower case, as addresses on it are written. */
  domain_name: z.string(),
  verification_status: z.enum(DOMAIN_STATUSES),
  failure_reason: z.string().nullable(),
});

/** For domains (services only): an inbox of one environment, to check a catch-all target. */
export const inboxOfEnvironmentRequest = z.object({ org_id: idSchema('organization'), env_id: idSchema('environment'), inbox_id: idSchema('inbox') });
export const inboxOfEnvironment = z.object({ inbox_id: idSchema('inbox'), address: z.string(), domain: z.string() });

// Sending with a custom domain's key (issue 25, part 7).

/** For mail-send (services only): the domain of an environment by name, to sign its mail with. */
export const signingKeyRequest = z.object({ org_id: idSchema('organization'), env_id: idSchema('environment'), domain_name: z.string().min(1).max(253) });
export const signingKey = z.object({
  domain_id: idSchema('domain'),
  domain_name: z.string(),
  status: z.enum(DOMAIN_STATUSES),
  /** Why the domain is not verified; null when it is. */
  failure_reason: z.string().nullable(),
  /** The selector of the key that signs now (a rotation's new key signs once its record verifies). */
  selector: z.string(),
  /** The private key (PKCS#8 PEM) sealed with SECRETS_ENCRYPTION_KEY, the domain id as associated data, base64: it never crosses the bus in the clear. */
  private_key_sealed: z.string(),
  /** `bounces.<domain>` when its CNAME to our bounce domain verifies (VERP envelope senders there); null: the platform's BOUNCE_DOMAIN. */
  bounce_domain: z.string().nullable(),
});
export type SigningKey = z.infer<typeof signingKey>;
