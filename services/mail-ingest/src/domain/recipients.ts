/**
 * RCPT TO decisions: which addresses are ours, and which inbox each is. A domain is ours when
 * ServedDomains says so (ours, or a custom domain the domains service serves); an address of
 * it no inbox has goes to the domain's catch-all inbox when it has one, else is refused.
 * VERP addresses of our reports are ours on the bounce domain and on `bounces.<a served
 * custom domain>` (the CNAME the domain publishes). Lookups are cached briefly (positive and
 * negative) so a burst of mail to one address asks the mailbox service once; a deleted inbox
 * is refused within RCPT_CACHE_TTL_MS.
 */
import { AppError, BOUNCE_LABEL, VERP_LOCAL_PART } from '@mailroom/contracts';
import { ttlCache, type TtlCache } from '@mailroom/platform';
import { SmtpReply } from './replies';
import type { DomainRoute, DomainRoutes } from './served-domains';

export interface InboxRecipient {
  kind: 'inbox';
  address: string;
  inbox_id: string;
  org_id: string;
  env_id: string;
}

/** A delivery or complaint report coming back to one of our VERP envelope senders. */
export interface FeedbackRecipient {
  kind: 'feedback';
  address: string;
}

export type Recipient = InboxRecipient | FeedbackRecipient;

type InboxRef = Omit<InboxRecipient, 'address' | 'kind'>;
export type Lookup = (address: string) => Promise<InboxRef | null>;

const ADDRESS = /^[^\s@<>()[\]\\,;:"]{1,64}@[a-z0-9.-]{1,253}$/i;
const MAX_CACHED = 100_000;

export class RecipientResolver {
  /** Absent when ttlMs is 0: every RCPT asks. */
  private readonly cache: TtlCache<string, { value: InboxRef | null }> | undefined;

  constructor(
    private readonly domains: DomainRoutes,
    private readonly lookup: Lookup,
    ttlMs: number,
    now: () => number = Date.now,
    /** Where our VERP envelope senders live; their mail is routed to mail.feedback. */
    private readonly bounceDomain?: string,
  ) {
    this.cache = ttlMs > 0 ? ttlCache({ max: MAX_CACHED, ttlMs, now }) : undefined;
  }

  /** The inbox behind `address`, or an SmtpReply to give instead. */
  async resolve(raw: string): Promise<Recipient> {
    const address = raw.trim().toLowerCase();
    if (!ADDRESS.test(address)) throw new SmtpReply('badAddress');
    const at = address.lastIndexOf('@');
    const local = address.slice(0, at);
    const domain = address.slice(at + 1);
    const verp = VERP_LOCAL_PART.test(local);
    if (verp && domain === this.bounceDomain) return { kind: 'feedback', address };
    const route = await this.routeOf(domain);
    if (!route.served) {
      const parent = domain.startsWith(`${BOUNCE_LABEL}.`) ? domain.slice(BOUNCE_LABEL.length + 1) : undefined;
      if (verp && parent && (await this.routeOf(parent)).served) return { kind: 'feedback', address };
      throw new SmtpReply('relayDenied');
    }
    // An inbox of an organization the name is not served for (it lost the name) takes nothing there.
    const ours = (inbox: InboxRef | null) => (inbox && (!route.org_ids || route.org_ids.includes(inbox.org_id)) ? inbox : null);
    let value = ours(await this.inboxOf(address));
    if (!value && route.catch_all_address && route.catch_all_address !== address) value = ours(await this.inboxOf(route.catch_all_address));
    if (!value) throw new SmtpReply('noSuchUser');
    return { kind: 'inbox', address, ...value };
  }

  private async routeOf(domain: string): Promise<DomainRoute> {
    try {
      return await this.domains.route(domain);
    } catch (err) {
      // The domains service is down or slow: the sender must try again, not give up.
      if (err instanceof AppError && !err.retryable && err.code !== 'internal_error') throw err;
      throw new SmtpReply('tryLater', 'domain lookup unavailable');
    }
  }

  private async inboxOf(address: string): Promise<InboxRef | null> {
    const hit = this.cache?.get(address);
    if (hit) return hit.value;
    let value: InboxRef | null;
    try {
      value = await this.lookup(address);
    } catch (err) {
      // The mailbox service is down or slow: the sender must try again, not give up.
      if (err instanceof AppError && !err.retryable && err.code !== 'internal_error') throw err;
      throw new SmtpReply('tryLater', 'recipient lookup unavailable');
    }
    this.cache?.set(address, { value });
    return value;
  }
}
