/**
 * A person's account leaving the platform, as auth asks (services only):
 * - `owned`: the organizations they own, with their member counts (auth refuses a deletion
 *   while one of them has other members: the rule is auth's);
 * - `purge`, once the account's recovery window has passed: each membership is removed with
 *   its fact; an organization they were the only member of is deleted with every environment,
 *   each announced as deleted (internal.orgs.environment.deleted), so auth, mailbox and
 *   webhooks remove the keys, inboxes and endpoints it held, as for any deleted environment;
 *   an organization they still owned with others (members who joined while the account was
 *   deleted, by an invitation sent before) passes to its longest-standing admin, else its
 *   longest-standing member. Each organization is decided in one transaction with its row
 *   locked (joining locks it too); asked again, it finds nothing left and changes nothing.
 */
import type { UserPurged } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { DepartureRepository } from '../repo/departure.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import type { EnvironmentFacts, MembershipFacts, Transact } from './ports';

/** Who owns an organization once its owner is gone: the longest-standing admin, else the longest-standing member (`others` longest-standing first). */
export function successor(others: readonly MemberRow[]): MemberRow | undefined {
  return others.find((m) => m.role === 'admin') ?? others[0];
}

export class Departures {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<DepartureRepository, keyof DepartureRepository>,
    private readonly members: Pick<MemberRepository, 'remove' | 'updateRole'>,
    private readonly facts: MembershipFacts,
    private readonly environmentFacts: Pick<EnvironmentFacts, 'deleted' | 'kick'>,
    private readonly clock: Clock,
  ) {}

  owned(userId: string): Promise<{ org_id: string; org_name: string; members: number }[]> {
    return this.repo.ownedBy(userId);
  }

  async purge(userId: string): Promise<UserPurged> {
    const result: UserPurged = { memberships_removed: 0, organizations_deleted: [], ownership_passed: [] };
    for (const orgId of await this.repo.organizationsOf(userId)) {
      const outcome = await this.transact((tx) => this.leave(tx, orgId, userId));
      if (outcome === 'gone') continue;
      result.memberships_removed += 1;
      if (outcome === 'deleted') result.organizations_deleted.push(orgId);
      if (outcome === 'passed') result.ownership_passed.push(orgId);
    }
    this.facts.kick();
    this.environmentFacts.kick();
    return result;
  }

  private async leave(tx: OrgsTx, orgId: string, userId: string): Promise<'gone' | 'removed' | 'passed' | 'deleted'> {
    if (!(await this.repo.lockOrganization(orgId, tx))) return 'gone';
    const members = await this.repo.members(orgId, tx);
    const me = members.find((m) => m.user_id === userId);
    if (!me) return 'gone';
    const now = this.clock.now().toISOString();
    await this.facts.changed(tx, { org_id: orgId, user_id: userId, member_id: me.id, role: null, changed_at: now });
    const others = members.filter((m) => m.id !== me.id);
    if (others.length === 0) {
      for (const envId of await this.repo.environmentIds(orgId, tx)) await this.environmentFacts.deleted(tx, { org_id: orgId, env_id: envId, deleted_at: now });
      await this.repo.deleteOrganization(orgId, tx);
      return 'deleted';
    }
    await this.members.remove(orgId, me.id, tx);
    const heir = me.role === 'owner' ? successor(others) : undefined;
    if (!heir) return 'removed';
    // The owner's row is gone first: the one-owner index holds at every statement.
    await this.members.updateRole(orgId, heir.id, 'owner', tx);
    await this.facts.changed(tx, { org_id: orgId, user_id: heir.user_id, member_id: heir.id, role: 'owner', changed_at: now });
    return 'passed';
  }
}
