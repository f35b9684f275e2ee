/**
 * Custom domains as mail-send signs for them (issue 25, part 7): the key and standing of a
 * domain of an environment, asked of the domains service (`domains.domain.signingKey`), its
 * sealed key opened and parsed once, and kept for a while. A fact of DOMAINS_FACTS about the
 * domain (verified, unverified, deleted, key rotated) drops it at once (`forget`), so the next
 * send asks again; the TTL bounds what a missed fact could leave.
 *
 * And who a message is from, as the relay sees it (`OutboundIdentity`): mail from MAIL_DOMAIN
 * is signed with the platform's key and returns to the platform's bounce domain; mail from a
 * custom domain is signed d=<the domain> with its own key, and returns to `bounces.<domain>`
 * once that name verifies (else to the platform's bounce domain).
 */
import type { KeyObject } from 'node:crypto';
import { AppError, type DomainStatus, type OutboundJob, type SigningKey } from '@mailroom/contracts';
import { ttlCache, type Clock, type TtlCache } from '@mailroom/platform';
import type { DkimKey } from './dkim';
import type { Verp } from './verp';

/** The domain of an environment named so, as domains answers it; null: the environment has no such domain. */
export type SigningKeyLookup = (orgId: string, envId: string, domainName: string) => Promise<SigningKey | null>;
/** The sealed private key (base64) opened with SECRETS_ENCRYPTION_KEY (the domain id as associated data) and parsed. */
export type OpenKey = (sealedBase64: string, domainId: string) => KeyObject;

export interface SendingDomain {
  domainId: string;
  name: string;
  status: DomainStatus;
  failureReason: string | null;
  key: DkimKey;
  /** `bounces.<domain>` when its record verifies; null: the platform's bounce domain. */
  bounceDomain: string | null;
}

const CACHE_MAX = 10_000;

/** The domain part of an address, lower case; '' when there is none. */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).trim().toLowerCase().replace(/\.$/, '');
}

export class SendingDomains {
  private readonly cache: TtlCache<string, SendingDomain>;
  /** Lookups under way, so sends from one domain at once ask once. */
  private readonly asking = new Map<string, Promise<SendingDomain | null>>();
  /** Bumped by `forget`: a lookup that began before a fact is not cached after it. */
  private generation = 0;

  constructor(
    private readonly lookup: SigningKeyLookup,
    private readonly open: OpenKey,
    clock: Clock,
    ttlMs: number,
  ) {
    this.cache = ttlCache({ max: CACHE_MAX, ttlMs, now: () => clock.now().getTime() });
  }

  /** The domain, or null when the environment has none of that name (never cached: a domain may be added). */
  async of(orgId: string, envId: string, domainName: string): Promise<SendingDomain | null> {
    const key = `${orgId}/${envId}/${domainName}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const pending = this.asking.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const asked: Promise<SendingDomain | null> = this.fetch(orgId, envId, domainName).finally(() => {
      // Only its own entry: a lookup begun after a fact may be under way under the key.
      if (this.asking.get(key) === asked) this.asking.delete(key);
    });
    this.asking.set(key, asked);
    const found = await asked;
    if (found && generation === this.generation) this.cache.set(key, found);
    return found;
  }

  /** A fact about the domain: what is kept of it is stale. */
  forget(orgId: string, envId: string, domainName: string): void {
    this.generation++;
    const key = `${orgId}/${envId}/${domainName}`;
    this.cache.delete(key);
    this.asking.delete(key);
  }

  private async fetch(orgId: string, envId: string, domainName: string): Promise<SendingDomain | null> {
    const answer = await this.lookup(orgId, envId, domainName);
    if (!answer) return null;
    let privateKey: KeyObject;
    try {
      privateKey = this.open(answer.private_key_sealed, answer.domain_id);
    } catch {
      throw new AppError('internal_error', `the DKIM key of ${answer.domain_name} could not be opened: SECRETS_ENCRYPTION_KEY must be the same for the domains and mail-send services`);
    }
    return {
      domainId: answer.domain_id,
      name: answer.domain_name,
      status: answer.status,
      failureReason: answer.failure_reason,
      key: { domain: answer.domain_name, selector: answer.selector, privateKey },
      bounceDomain: answer.bounce_domain,
    };
  }
}

/** Why a message cannot be signed for now (its domain gone, domains not answering): a temporary failure of the hand-over. */
export class SigningUnavailable extends Error {}

export interface Signing {
  /** undefined: no platform key (development without DKIM_PRIVATE_KEY and mail from MAIL_DOMAIN). */
  dkim: DkimKey | undefined;
  /** The envelope sender: our VERP address. */
  returnPath: string;
}

export class OutboundIdentity {
  constructor(
    private readonly ownDomain: string,
    private readonly platformKey: DkimKey | undefined,
    private readonly verp: Verp,
    private readonly domains: Pick<SendingDomains, 'of'>,
  ) {}

  /**
   * How a message is signed and where its reports return. A message accepted from a domain
   * that has since stopped verifying is still signed with its key (it exists, and the message
   * was accepted); one whose domain is gone cannot be signed: SigningUnavailable, retried and,
   * after the tries, bounced.
   */
  async of(job: Pick<OutboundJob, 'org_id' | 'env_id' | 'message_id' | 'from'>): Promise<Signing> {
    const name = domainOf(job.from.address);
    if (name === this.ownDomain) return { dkim: this.platformKey, returnPath: this.verp.address(job.message_id) };
    let domain: SendingDomain | null;
    try {
      domain = await this.domains.of(job.org_id, job.env_id, name);
    } catch (err) {
      throw new SigningUnavailable(`the key of ${name} could not be fetched: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (!domain) throw new SigningUnavailable(`${name} is no longer a domain of this environment (deleted): its mail cannot be signed`);
    return { dkim: domain.key, returnPath: this.verp.address(job.message_id, domain.bounceDomain ?? undefined) };
  }
}
