/**
 * Members of an organization: list and read them (with the person's name and email from
 * auth), change a role, remove a member, leave. The rules:
 * - people with members.manage (owner, admin) change roles and remove members; the acting
 *   person's role is read again, locked, in the transaction of the change (a token's role may
 *   be a second old);
 * - nobody changes their own role, and nobody changes the owner's: ownership moves only by
 *   transfer; an admin cannot grant owner, and the owner cannot make a second one;
 * - the owner cannot be removed and cannot leave; removing yourself is leaving;
 * - every change is one transaction with its fact (internal.orgs.member.changed), which tells
 *   gateways to act on the member's tokens with the new role, or refuse them, within a second.
 * API keys a removed member created stay: keys belong to the organization and environment.
 */
import {
  AppError,
  authorize,
  pageCursor,
  encodePageToken,
  idSchema,
  ROLE_PERMISSIONS,
  userOf,
  type AuthContext,
  type Member,
  type Role,
  type UserProfile,
  auditEntryOf,
  type CallOrigin,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import type { AuditTrail, MembershipFacts, Transact, UsersPort } from './ports';

const cursor = z.object({ after: idSchema('member') });

export function toMember(row: MemberRow, profile: UserProfile | undefined): Member {
  return {
    id: row.id,
    org_id: row.org_id,
    user_id: row.user_id,
    role: row.role,
    email: profile?.email ?? null,
    name: profile?.name ?? null,
    created_at: row.created_at.toISOString(),
  };
}

/** Why `actor` may not give `target` the role `role`; undefined when it may. */
export function roleChangeRefusal(actor: Pick<MemberRow, 'id' | 'role'>, target: Pick<MemberRow, 'id' | 'role'>, role: Role): AppError | undefined {
  if (!ROLE_PERMISSIONS[actor.role].includes('members.manage')) return new AppError('forbidden', `only the owner or an admin can change roles; your role is ${actor.role}`);
  if (actor.id === target.id) return new AppError('forbidden', 'you cannot change your own role; ask the owner or another admin');
  if (target.role === 'owner') return new AppError('forbidden', "the owner's role changes only by ownership transfer (POST /api/v1/org/transfer-ownership)");
  if (role === 'owner') {
    return actor.role === 'owner'
      ? new AppError('conflict', 'an organization has exactly one owner; transfer ownership instead (POST /api/v1/org/transfer-ownership)')
      : new AppError('forbidden', 'an admin cannot grant owner; ownership moves only by transfer from the owner');
  }
  return undefined;
}

/** Why `actor` may not remove `target`; undefined when it may. */
export function removalRefusal(actor: Pick<MemberRow, 'id' | 'role'>, target: Pick<MemberRow, 'id' | 'role'>): AppError | undefined {
  if (!ROLE_PERMISSIONS[actor.role].includes('members.manage')) return new AppError('forbidden', `only the owner or an admin can remove members; your role is ${actor.role}`);
  if (target.role === 'owner') return new AppError('forbidden', 'the owner cannot be removed; ownership moves first, by transfer');
  if (actor.id === target.id) return new AppError('invalid_request', 'to leave the organization yourself, use POST /api/v1/org/members/leave');
  return undefined;
}

export class Members {
  constructor(
    private readonly transact: Transact,
    private readonly repo: Pick<MemberRepository, keyof MemberRepository>,
    private readonly users: UsersPort,
    private readonly facts: MembershipFacts,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
  ) {}

  async list(auth: AuthContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Member[]; next_page_token: string | null }> {
    const { org_id } = authorize(auth, 'members.read');
    const after = pageCursor(q.page_token, cursor)?.after;
    const rows = await this.repo.list(org_id, { limit: q.limit + 1, after });
    const page = rows.slice(0, q.limit);
    const profiles = await this.profiles(page);
    const last = page.at(-1);
    return {
      data: page.map((r) => toMember(r, profiles.get(r.user_id))),
      next_page_token: rows.length > q.limit && last ? encodePageToken({ after: last.id }) : null,
    };
  }

  async get(auth: AuthContext, id: string): Promise<Member> {
    const { org_id } = authorize(auth, 'members.read');
    const row = await this.repo.find(org_id, id);
    if (!row) throw AppError.notFound('member');
    return toMember(row, (await this.profiles([row])).get(row.user_id));
  }

  async changeRole(auth: AuthContext, id: string, role: Role, origin: CallOrigin = {}): Promise<Member> {
    const user = userOf(authorize(auth, 'members.manage'));
    const changed = await this.transact(async (trx) => {
      const { actor, target } = await this.lockActorAndMember(trx, user, id);
      const refusal = roleChangeRefusal(actor, target, role);
      if (refusal) throw refusal;
      if (target.role === role) return { row: target, fact: false };
      await this.repo.updateRole(user.org_id, id, role, trx);
      await this.announce(trx, target, role);
      await this.audit.record(trx, auditEntryOf({ auth, ...origin }, this.clock.now(), { action: 'member.role_changed', org_id: user.org_id, target: { type: 'member', id }, details: { user_id: target.user_id, from: target.role, to: role } }));
      return { row: { ...target, role }, fact: true };
    });
    if (changed.fact) {
      this.facts.kick();
      this.audit.kick();
    }
    return toMember(changed.row, (await this.profiles([changed.row])).get(changed.row.user_id));
  }

  async remove(auth: AuthContext, id: string, origin: CallOrigin = {}): Promise<void> {
    const user = userOf(authorize(auth, 'members.manage'));
    await this.transact(async (trx) => {
      const { actor, target } = await this.lockActorAndMember(trx, user, id);
      const refusal = removalRefusal(actor, target);
      if (refusal) throw refusal;
      await this.repo.remove(user.org_id, id, trx);
      await this.announce(trx, target, null);
      await this.audit.record(trx, auditEntryOf({ auth, ...origin }, this.clock.now(), { action: 'member.removed', org_id: user.org_id, target: { type: 'member', id }, details: { user_id: target.user_id, role: target.role } }));
    });
    this.facts.kick();
    this.audit.kick();
  }

  async leave(auth: AuthContext): Promise<void> {
    const user = userOf(auth);
    await this.transact(async (trx) => {
      const me = await this.repo.findByUser(user.org_id, user.user_id, trx, true);
      if (!me) throw AppError.notFound('membership');
      if (me.role === 'owner') throw new AppError('conflict', 'the owner cannot leave the organization; transfer ownership first (POST /api/v1/org/transfer-ownership)');
      await this.repo.remove(user.org_id, me.id, trx);
      await this.announce(trx, me, null);
    });
    this.facts.kick();
  }

  private async lockActorAndMember(trx: OrgsTx, user: { org_id: string; user_id: string }, id: string): Promise<{ actor: MemberRow; target: MemberRow }> {
    const rows = await this.repo.lockActorAndMember(user.org_id, user.user_id, id, trx);
    const target = rows.find((r) => r.id === id);
    if (!target) throw AppError.notFound('member');
    const actor = rows.find((r) => r.user_id === user.user_id);
    // The token is a second old at most: its holder was removed meanwhile.
    if (!actor) throw new AppError('forbidden', 'you are no longer a member of this organization');
    return { actor, target };
  }

  private announce(trx: OrgsTx, member: MemberRow, role: Role | null): Promise<void> {
    return this.facts.changed(trx, { org_id: member.org_id, user_id: member.user_id, member_id: member.id, role, changed_at: this.clock.now().toISOString() });
  }

  private async profiles(rows: MemberRow[]): Promise<Map<string, UserProfile>> {
    if (rows.length === 0) return new Map();
    const found = await this.users.profiles([...new Set(rows.map((r) => r.user_id))]);
    return new Map(found.map((p) => [p.id, p]));
  }
}
