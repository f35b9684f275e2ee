/**
 * RCPT TO decisions: which addresses are ours, and which inbox each is. Lookups are cached
 * briefly (positive and negative) so a burst of mail to one address asks the mailbox
 * service once; a deleted inbox is refused within RCPT_CACHE_TTL_MS.
 */
import { AppError, VERP_LOCAL_PART } from '@mailroom/contracts';
import { ttlCache, type TtlCache } from '@mailroom/platform';
import { SmtpReply } from './replies';

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
    private readonly domains: Set<string>,
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
    const domain = address.slice(at + 1);
    if (domain === this.bounceDomain && VERP_LOCAL_PART.test(address.slice(0, at))) return { kind: 'feedback', address };
    if (!this.domains.has(domain)) throw new SmtpReply('relayDenied');
    const hit = this.cache?.get(address);
    let value: InboxRef | null;
    if (hit) {
      value = hit.value;
    } else {
      try {
        value = await this.lookup(address);
      } catch (err) {
        // The mailbox service is down or slow: the sender must try again, not give up.
        if (err instanceof AppError && !err.retryable && err.code !== 'internal_error') throw err;
        throw new SmtpReply('tryLater', 'recipient lookup unavailable');
      }
      this.cache?.set(address, { value });
    }
    if (!value) throw new SmtpReply('noSuchUser');
    return { kind: 'inbox', address, ...value };
  }
}
