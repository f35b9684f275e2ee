/**
 * The custom domain of each inbox, for the per-domain rollups. The events do not say it (the
 * spec's envelopes have no domain), and metrics trusts no publisher with it: it asks the
 * owners, once per inbox, and keeps the answer (table `inbox_domains`) for good, so a
 * redelivery, a second instance and a replay file every event of an inbox under the same
 * domain. The owners: mailbox says the inbox's domain name (for the event's organization and
 * environment, so an event of another tenant's inbox learns nothing), and domains says which
 * of that environment's domains has the name (its id). An inbox on MAIL_DOMAIN, one mailbox no
 * longer has (deleted before metrics first saw it), or a name no domain of the environment
 * has, is on no domain (null), and that is kept too.
 *
 * An inbox's domain does not change: its address is fixed, and a domain is deleted only when
 * no live inbox uses it. Asked before the counting transaction (no database connection waits
 * on the bus); an owner that does not answer fails the batch, which is redelivered: counting
 * waits, nothing is counted under a wrong domain.
 */
import { AppError, type EventEnvelope } from '@mailroom/contracts';
import { incrementOf } from './rollup';

export interface InboxRef {
  org_id: string;
  env_id: string;
  inbox_id: string;
}

export interface InboxDomain extends InboxRef {
  /** The custom domain's id; null: on no custom domain. */
  domain_id: string | null;
}

/** Asks the owners (clients/inbox-domains.client.ts). Answers null for no custom domain; throws when an owner does not answer. */
export interface InboxDomainsPort {
  domainOf(inbox: InboxRef): Promise<string | null>;
}

/** Inboxes asked at once. */
export const LOOKUP_CONCURRENCY = 16;

export function inboxKey(i: InboxRef): string {
  return `${i.org_id}\u0000${i.env_id}\u0000${i.inbox_id}`;
}

/** The inboxes of the events that count something, each once, in key order. */
export function inboxesOf(events: readonly EventEnvelope[]): InboxRef[] {
  const refs = new Map<string, InboxRef>();
  for (const e of events) {
    const inc = incrementOf(e);
    if (inc) refs.set(inboxKey(inc.key), { org_id: inc.key.org_id, env_id: inc.key.env_id, inbox_id: inc.key.inbox_id });
  }
  return [...refs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}

/** Each inbox's domain, asked LOOKUP_CONCURRENCY at a time; any failure is a retryable error (the batch comes back). */
export async function lookUpDomains(inboxes: readonly InboxRef[], port: InboxDomainsPort): Promise<InboxDomain[]> {
  const out: InboxDomain[] = [];
  for (let i = 0; i < inboxes.length; i += LOOKUP_CONCURRENCY) {
    const chunk = inboxes.slice(i, i + LOOKUP_CONCURRENCY);
    try {
      out.push(...(await Promise.all(chunk.map(async (ref) => ({ ...ref, domain_id: await port.domainOf(ref) })))));
    } catch (err) {
      throw new AppError('service_unavailable', `the domain of an inbox could not be learned (${err instanceof Error ? err.message : String(err)}); the events are counted once it can`, {
        cause: err,
        retryable: true,
      });
    }
  }
  return out;
}

/** The domain of an event's inbox from what is known; a counted inbox not known is an error (retryable: it is learned again). */
export function domainLookup(known: readonly InboxDomain[]): (ref: InboxRef) => string | null {
  const byKey = new Map(known.map((k) => [inboxKey(k), k.domain_id]));
  return (ref) => {
    const d = byKey.get(inboxKey(ref));
    if (d === undefined) throw new AppError('service_unavailable', `the domain of inbox ${ref.inbox_id} is not known yet`, { retryable: true });
    return d;
  };
}

/**
 * The domain filter of a read, with the inbox filter: a domain alone reads its row, an inbox
 * alone its own; both read the inbox's row, and the inbox must be on that domain (400 otherwise:
 * the two filters contradict each other, whatever the data). `inboxDomain` is what metrics
 * learned of the inbox (null: on no custom domain).
 */
export function checkInboxOnDomain(q: { inbox_id: string; domain_id: string }, inboxDomain: string | null): void {
  if (inboxDomain === q.domain_id) return;
  const where = inboxDomain === null ? 'on no custom domain' : `on domain ${inboxDomain}`;
  throw new AppError('invalid_request', `inbox ${q.inbox_id} is ${where}, not on ${q.domain_id}: give one of inbox_id and domain_id, or an inbox on that domain`, {
    details: [{ path: 'query.inbox_id', message: `not on domain ${q.domain_id}` }],
  });
}
