/**
 * An organization's usage (GET /api/v1/org/usage): what it holds against its plan's limits,
 * and its mail of the current period, over every environment whichever one the caller acts
 * in. Each count comes from the service that owns it: orgs counts members (with the
 * invitations still pending, as the plan's limit does) and environments; mailbox, webhooks and
 * domains answer what they hold over the bus, and the metrics service the period's mail from
 * its rollups of the events (message.sent, message.received), so those counts are a few
 * seconds behind the mail. An owner that does not answer makes the whole answer a 503 naming
 * it: a count left out would read as none.
 */
import { AppError, planSchema, type OrgUsage, type PlanLimits, type PlanName } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { UsageRepository } from '../repo/usage.repository';
import type { Period, UsageOwners } from './ports';

/** The period of usage holding `now`: its calendar month in UTC, start included, end excluded. */
export function periodOf(now: Date): Period {
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

type Owner = keyof UsageOwners;
type OwnedCounts = Awaited<ReturnType<UsageOwners['mailbox']>> &
  Awaited<ReturnType<UsageOwners['metrics']>> &
  Awaited<ReturnType<UsageOwners['webhooks']>> &
  Awaited<ReturnType<UsageOwners['domains']>>;

/** What each owner counts, for the refusal that names what could not be counted. */
const COUNTED_BY: Record<Owner, (keyof OwnedCounts)[]> = {
  mailbox: ['inboxes'],
  metrics: ['messages_sent', 'messages_received'],
  webhooks: ['webhook_endpoints'],
  domains: ['domains'],
};

/** A call that failed because its service did not answer (none running, or too slow), not because it refused. */
function unanswered(err: unknown): boolean {
  return err instanceof AppError && (err.code === 'service_unavailable' || err.code === 'gateway_timeout');
}

/** The 503 of the owners that did not answer, naming each and what it counts. */
export function ownersUnavailable(owners: Owner[]): AppError {
  const named = owners.map((o) => `the ${o} service (${COUNTED_BY[o].join(', ')})`);
  const list = named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named.at(-1)}` : named[0];
  return new AppError('service_unavailable', `usage cannot be counted now: ${list} did not answer; retry shortly`, {
    details: owners.flatMap((o) => COUNTED_BY[o].map((count) => ({ path: `usage.${count}`, message: `counted by the ${o} service, which did not answer` }))),
  });
}

/** Every owner's counts, or a refusal: one that refused throws its error; those that did not answer, one 503 naming them all. */
export async function countsOfOwners(owners: UsageOwners, orgId: string, period: Period): Promise<OwnedCounts> {
  const [mailbox, metrics, webhooks, domains] = await Promise.allSettled([owners.mailbox(orgId), owners.metrics(orgId, period), owners.webhooks(orgId), owners.domains(orgId)]);
  const failed = (
    [
      ['mailbox', mailbox],
      ['metrics', metrics],
      ['webhooks', webhooks],
      ['domains', domains],
    ] as const
  ).flatMap(([owner, r]) => (r.status === 'rejected' ? [{ owner, err: r.reason }] : []));
  const refused = failed.find((f) => !unanswered(f.err));
  if (refused) throw refused.err;
  if (mailbox.status === 'rejected' || metrics.status === 'rejected' || webhooks.status === 'rejected' || domains.status === 'rejected') throw ownersUnavailable(failed.map((f) => f.owner));
  return { ...mailbox.value, ...metrics.value, ...webhooks.value, ...domains.value };
}

export class Usage {
  constructor(
    private readonly repo: Pick<UsageRepository, 'held'>,
    private readonly owners: UsageOwners,
    private readonly plans: Record<PlanName, PlanLimits>,
    private readonly clock: Clock,
  ) {}

  async of(orgId: string): Promise<OrgUsage> {
    const now = this.clock.now();
    const period = periodOf(now);
    const [held, owned] = await Promise.all([this.repo.held(orgId, now), countsOfOwners(this.owners, orgId, period)]);
    if (!held) throw AppError.notFound('organization');
    const plan = planSchema.safeParse(held.plan);
    if (!plan.success) throw new AppError('internal_error', `organization ${orgId} is on plan ${JSON.stringify(held.plan)}, which the plan table does not hold`);
    const limits = this.plans[plan.data];
    return {
      org_id: orgId,
      plan: plan.data,
      period: { start: period.start.toISOString(), end: period.end.toISOString() },
      usage: {
        inboxes: { used: owned.inboxes, limit: limits.inboxes },
        domains: { used: owned.domains, limit: limits.domains },
        members: { used: held.members + held.pending_invitations, limit: limits.members, pending_invitations: held.pending_invitations },
        environments: { used: held.environments, limit: limits.environments },
        webhook_endpoints: { used: owned.webhook_endpoints, limit: limits.webhook_endpoints },
        // Messages are not capped by plan (contracts plans.ts).
        messages_sent: { used: owned.messages_sent, limit: null },
        messages_received: { used: owned.messages_received, limit: null },
      },
      generated_at: now.toISOString(),
    };
  }
}
