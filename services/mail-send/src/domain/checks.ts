/**
 * Checks before a message is stored to be sent: a paused inbox or organization
 * (account_paused), a From on a custom domain that is not verified in the environment
 * (account_paused: the sending account is the domain), a recipient on the suppression list
 * (blocked_recipient), the inbox's or organization's send rate (rate_limited). A refusal is announced as message.rejected (it has no message
 * id: nothing was stored) and answered to the caller with the same reason.
 */
import { AppError, type EnvelopeOf, type OrganizationStatus, type REJECTION_REASONS, type SendCheckRequest } from '@mailroom/contracts';
import { ttlCache, type Clock, type TtlCache } from '@mailroom/platform';
import type { SendRepository } from '../repo/send.repository';
import { newEventId } from './event-ids';
import type { EventSink, Transact } from './ports';
import { domainOf, type SendingDomain, type SendingDomains } from './sending-domains';

type Reason = (typeof REJECTION_REASONS)[number];

/**
 * Whole seconds until a send counted in the last minute leaves the window (the oldest one),
 * which frees a place under the limit: at least 1, at most 60.
 */
export function freedIn(oldest: Date | null, now: Date): number {
  if (!oldest) return 60;
  return Math.min(60, Math.max(1, Math.ceil((oldest.getTime() + 60_000 - now.getTime()) / 1000)));
}

export interface RateLimits {
  perInboxPerMinute: number;
  perOrgPerMinute: number;
}

/** How long an organization's status is trusted: a pause stops sends within this. */
export const ORG_STATUS_TTL_MS = 1_000;
const ORG_STATUS_CACHE_MAX = 10_000;

/** Organizations' status as the orgs service says, each asked at most once per ORG_STATUS_TTL_MS. */
export class OrgStatuses {
  private readonly cache: TtlCache<string, OrganizationStatus>;

  constructor(
    private readonly ask: (orgId: string) => Promise<OrganizationStatus>,
    clock: Clock,
  ) {
    this.cache = ttlCache({ max: ORG_STATUS_CACHE_MAX, ttlMs: ORG_STATUS_TTL_MS, now: () => clock.now().getTime() });
  }

  async of(orgId: string): Promise<OrganizationStatus> {
    const hit = this.cache.get(orgId);
    if (hit) return hit;
    const status = await this.ask(orgId);
    this.cache.set(orgId, status);
    return status;
  }
}

/**
 * Why mail from `from` may not be sent (its domain is custom and not verified, or not a domain
 * of the environment at all), or undefined; mail from MAIL_DOMAIN is not the domains' to judge.
 */
export function domainRefusal(name: string, domain: Pick<SendingDomain, 'status' | 'failureReason'> | null): string | undefined {
  if (!domain) return `the domain ${name} is not a domain of this environment; add it (POST /api/v1/domains) and verify it to send from it`;
  if (domain.status === 'verified') return undefined;
  const why = domain.failureReason ? ` (${domain.failureReason})` : '';
  if (domain.status === 'failed') return `the domain ${name} is no longer verified${why}; sending from it resumes once it verifies again`;
  return `the domain ${name} is not verified${why}; sending from it resumes once it verifies`;
}

/** The custom domains a From may be on: MAIL_DOMAIN is the platform's. */
export interface FromDomains {
  ownDomain: string;
  domains: Pick<SendingDomains, 'of'>;
}

export class SendChecks {
  constructor(
    private readonly transact: Transact,
    private readonly repo: SendRepository,
    private readonly outbox: EventSink,
    private readonly clock: Clock,
    private readonly limits: RateLimits,
    private readonly orgs: Pick<OrgStatuses, 'of'>,
    private readonly from: FromDomains,
  ) {}

  async check(req: SendCheckRequest): Promise<void> {
    const now = this.clock.now();
    const refusal = await this.refusal(req, now);
    if (!refusal) return;
    const event: EnvelopeOf<'message.rejected'> = {
      id: newEventId(),
      type: 'message.rejected',
      timestamp: now.toISOString(),
      org_id: req.org_id,
      env_id: req.env_id,
      data: {
        inbox_id: req.inbox_id,
        from_address: req.from_address,
        to_addresses: req.to_addresses,
        subject: req.subject,
        rejection_reason: refusal.reason,
        rejection_detail: refusal.detail,
        rejected_at: now.toISOString(),
      },
    };
    await this.transact((trx) => this.outbox.add(trx, event));
    this.outbox.kick();
    throw new AppError(refusal.reason, refusal.detail, refusal.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: refusal.retryAfterSeconds });
  }

  private async refusal(req: SendCheckRequest, now: Date): Promise<{ reason: Reason; detail: string; retryAfterSeconds?: number } | undefined> {
    if (req.inbox_status === 'paused') return { reason: 'account_paused', detail: 'the inbox is paused; resume it to send' };
    if ((await this.orgs.of(req.org_id)) === 'paused') return { reason: 'account_paused', detail: 'the organization is paused; an owner or admin resumes it (PATCH /api/v1/org)' };
    const name = domainOf(req.from_address);
    if (name !== this.from.ownDomain) {
      // Asked before the send is logged: a refused send does not count toward the rate.
      const refused = domainRefusal(name, await this.from.domains.of(req.org_id, req.env_id, name));
      if (refused) return { reason: 'account_paused', detail: refused };
    }
    // Suppressions and rates in one statement; an admitted send is logged by the same statement.
    const admission = {
      org_id: req.org_id,
      env_id: req.env_id,
      inbox_id: req.inbox_id,
      addresses: req.to_addresses,
      message_id: req.message_id ?? null,
      since: new Date(now.getTime() - 60_000),
      at: now,
      perInbox: this.limits.perInboxPerMinute,
      perOrg: this.limits.perOrgPerMinute,
    };
    // With a limit, the organization's checks take turns (every instance's: the lock is
    // PostgreSQL's), or sends checked at once could all take the last place under it.
    const { blocked, inbox, org, inbox_oldest, org_oldest } =
      this.limits.perInboxPerMinute || this.limits.perOrgPerMinute
        ? await this.transact(async (tx) => {
            await this.repo.lockSendLog(req.org_id, tx);
            return this.repo.admit(admission, tx);
          })
        : await this.repo.admit(admission);
    if (blocked.length) {
      return { reason: 'blocked_recipient', detail: `on the suppression list: ${blocked.map((b) => `${b.address} (${b.reason})`).join(', ')}` };
    }
    if (this.limits.perInboxPerMinute && inbox >= this.limits.perInboxPerMinute) {
      return { reason: 'rate_limited', detail: `this inbox sent ${inbox} messages in the last minute (limit ${this.limits.perInboxPerMinute}); retry later`, retryAfterSeconds: freedIn(inbox_oldest, now) };
    }
    if (this.limits.perOrgPerMinute && org >= this.limits.perOrgPerMinute) {
      return { reason: 'rate_limited', detail: `the organization sent ${org} messages in the last minute (limit ${this.limits.perOrgPerMinute}); retry later`, retryAfterSeconds: freedIn(org_oldest, now) };
    }
    return undefined;
  }
}
