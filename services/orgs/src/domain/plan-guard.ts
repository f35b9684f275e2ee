/**
 * What an organization's plan lets it hold, checked where orgs creates it (environments;
 * members, with pending invitations): the organization is locked, then what it holds is
 * counted, in the transaction that adds the one more, so two creations at once cannot both
 * see room for it. The plans are configuration (config.plans); the rule is contracts'.
 */
import { AppError, checkRoomForOneMore, type PlanLimitName, type PlanName, type PlanTable } from '@mailroom/contracts';
import type { OrgsTx } from '../repo/tables';

/** The organization's plan, its row locked until `tx` ends (OrganizationRepository.lockPlan). */
export type LockPlan = (orgId: string, tx: OrgsTx) => Promise<PlanName | undefined>;

export class PlanGuard {
  constructor(
    private readonly plans: PlanTable,
    private readonly lockPlan: LockPlan,
  ) {}

  /**
   * Refuses (403 plan_limit) one more `name` beyond the organization's plan. `held` counts in
   * `tx`, after the lock, and only under a limit.
   */
  async roomForOneMore(tx: OrgsTx, orgId: string, name: PlanLimitName, held: () => Promise<number>): Promise<void> {
    const plan = await this.lockPlan(orgId, tx);
    if (!plan) throw AppError.notFound('organization');
    await checkRoomForOneMore(this.plans, plan, name, held);
  }
}
