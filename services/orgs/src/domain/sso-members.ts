/**
 * Members made by single sign-on (auth asks, services only): a person whom the
 * organization's identity provider signed in becomes a member with the configuration's
 * default role (never owner), within the plan's member limit, with the membership fact, in
 * one transaction. A member already keeps their role: the answer is their membership.
 */
import { AppError, newId, type Membership, type Role } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { MemberRepository } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import type { NewMember } from './invitations';
import type { PlanGuard } from './plan-guard';
import type { MembershipFacts, Transact } from './ports';

export class SsoMembers {
  constructor(
    private readonly transact: Transact,
    private readonly members: Pick<MemberRepository, 'findByUser' | 'count'>,
    private readonly addMember: (tx: OrgsTx, member: NewMember) => Promise<void>,
    private readonly membershipsOf: (userId: string) => Promise<Membership[]>,
    private readonly facts: MembershipFacts,
    private readonly plan: Pick<PlanGuard, 'roomForOneMore'>,
    private readonly clock: Clock,
  ) {}

  async join(req: { org_id: string; user_id: string; role: Exclude<Role, 'owner'> }): Promise<Membership> {
    const added = await this.transact(async (trx) => {
      // Locks the plan (and so the organization's member count) first: two sign-ins at once queue up.
      await this.plan.roomForOneMore(trx, req.org_id, 'members', async () => {
        // A member already needs no room: counted as if the limit were not reached.
        if (await this.members.findByUser(req.org_id, req.user_id, trx, true)) return 0;
        return this.members.count(req.org_id, trx);
      });
      if (await this.members.findByUser(req.org_id, req.user_id, trx, true)) return false;
      const now = this.clock.now();
      const member: NewMember = { id: newId('member'), org_id: req.org_id, user_id: req.user_id, role: req.role, now };
      await this.addMember(trx, member);
      await this.facts.changed(trx, { org_id: req.org_id, user_id: req.user_id, member_id: member.id, role: req.role, changed_at: now.toISOString() });
      return true;
    });
    if (added) this.facts.kick();
    const membership = (await this.membershipsOf(req.user_id)).find((m) => m.org_id === req.org_id);
    if (!membership) throw new AppError('internal_error', 'the membership made by SSO vanished');
    return membership;
  }
}
