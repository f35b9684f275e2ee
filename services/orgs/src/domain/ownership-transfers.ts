/**
 * Ownership transfer: the owner asks a member to take the organization over; the member
 * accepts (the owner becomes admin and the member owner) or the owner cancels. The rules:
 * - only the owner asks and cancels; only the member asked accepts;
 * - one pending request per organization (a second: 409); not to yourself (400); a member of
 *   another organization, or none, is 404;
 * - a request expires OWNERSHIP_TRANSFER_TTL_DAYS after it was made: it can then be neither
 *   accepted nor cancelled (410 `expired`), and a new request may be made;
 * - accept and cancel lock the request, so of two at once exactly one wins (the other: 409);
 * - acceptance is one transaction: both roles, the request's status, both membership facts
 *   (gateways apply the new roles to tokens within a second) and the mails;
 * - both parties are told by email (requested, accepted, cancelled), through mail.system.
 */
import {
  AppError,
  authorize,
  newId,
  OWNERSHIP_TRANSFER_TTL_DAYS,
  userOf,
  type AuthContext,
  type OwnershipTransfer,
  type SystemMail,
  type UserProfile,
  auditEntryOf,
  type CallOrigin,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OwnershipTransferRepository, OwnershipTransferRow } from '../repo/ownership-transfer.repository';
import type { OrgsTx } from '../repo/tables';
import type { AuditTrail, MembershipFacts, OrgNameOf, SystemMailPort, Transact, UsersPort } from './ports';

const DAY_MS = 86_400_000;

export function isExpired(row: Pick<OwnershipTransferRow, 'status' | 'expires_at'>, now: Date): boolean {
  return row.status === 'pending' && row.expires_at.getTime() <= now.getTime();
}

export function toTransfer(row: OwnershipTransferRow, now: Date): OwnershipTransfer {
  return {
    id: row.id,
    org_id: row.org_id,
    status: isExpired(row, now) ? 'expired' : row.status,
    from_member_id: row.from_member_id,
    from_user_id: row.from_user_id,
    to_member_id: row.to_member_id,
    to_user_id: row.to_user_id,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
  };
}

/** Why `actor` may not ask `target` to take ownership; undefined when it may. */
export function transferRefusal(actor: Pick<MemberRow, 'id' | 'role'>, target: Pick<MemberRow, 'id'>): AppError | undefined {
  if (actor.role !== 'owner') return new AppError('forbidden', `only the owner can transfer ownership; your role is ${actor.role}`);
  if (actor.id === target.id) return new AppError('invalid_request', 'you already own this organization; name another member', { details: [{ path: 'member_id', message: 'is your own membership' }] });
  return undefined;
}

/** Why a request can no longer be decided (accepted or cancelled); undefined while it can. */
export function decisionRefusal(row: OwnershipTransferRow, now: Date): AppError | undefined {
  if (row.status !== 'pending') return new AppError('conflict', `this ownership transfer was already ${row.status}`);
  if (isExpired(row, now)) return new AppError('expired', `this ownership transfer expired at ${row.expires_at.toISOString()}; the owner can ask again`);
  return undefined;
}

type Event = 'requested' | 'accepted' | 'cancelled';

export class OwnershipTransfers {
  constructor(
    private readonly transact: Transact,
    private readonly transfers: Pick<OwnershipTransferRepository, keyof OwnershipTransferRepository>,
    private readonly members: Pick<MemberRepository, 'lockActorAndMember' | 'findByUser' | 'updateRole'>,
    private readonly users: UsersPort,
    private readonly orgName: OrgNameOf,
    private readonly facts: MembershipFacts,
    private readonly mail: SystemMailPort,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
  ) {}

  async create(auth: AuthContext, memberId: string): Promise<OwnershipTransfer> {
    const user = userOf(authorize(auth, 'ownership.transfer'));
    const row = await this.transact(async (trx) => {
      // The owner's row is locked: two requests of the same owner are decided one after the other.
      const rows = await this.members.lockActorAndMember(user.org_id, user.user_id, memberId, trx);
      const target = rows.find((r) => r.id === memberId);
      if (!target) throw AppError.notFound('member');
      const actor = rows.find((r) => r.user_id === user.user_id);
      if (!actor) throw new AppError('forbidden', 'you are no longer a member of this organization');
      const refusal = transferRefusal(actor, target);
      if (refusal) throw refusal;
      const now = this.clock.now();
      const pending = await this.transfers.findPending(user.org_id, trx);
      if (pending && !isExpired(pending, now)) {
        throw new AppError('conflict', `an ownership transfer is already pending (${pending.id}, to member ${pending.to_member_id}); cancel it first (POST /api/v1/org/transfer-ownership/${pending.id}/cancel)`);
      }
      if (pending) await this.transfers.decide(user.org_id, pending.id, 'expired', now, trx);
      const made: OwnershipTransferRow = {
        id: newId('ownershipTransfer'),
        org_id: user.org_id,
        from_member_id: actor.id,
        from_user_id: actor.user_id,
        to_member_id: target.id,
        to_user_id: target.user_id,
        status: 'pending',
        created_at: now,
        expires_at: new Date(now.getTime() + OWNERSHIP_TRANSFER_TTL_DAYS * DAY_MS),
        decided_at: null,
      };
      await this.transfers.insert(made, trx);
      await this.tell(trx, made, 'requested');
      return made;
    });
    this.facts.kick();
    return toTransfer(row, this.clock.now());
  }

  async pending(auth: AuthContext): Promise<{ data: OwnershipTransfer[] }> {
    const { org_id } = authorize(auth, 'members.read');
    const row = await this.transfers.findPending(org_id);
    const now = this.clock.now();
    return { data: row && !isExpired(row, now) ? [toTransfer(row, now)] : [] };
  }

  async accept(auth: AuthContext, id: string, origin: CallOrigin = {}): Promise<OwnershipTransfer> {
    const user = userOf(auth);
    const row = await this.transact(async (trx) => {
      const now = this.clock.now();
      const t = await this.transfers.lock(user.org_id, id, trx);
      if (!t) throw AppError.notFound('ownership transfer');
      if (t.to_user_id !== user.user_id) throw new AppError('forbidden', 'only the member this transfer is addressed to can accept it');
      const refusal = decisionRefusal(t, now);
      if (refusal) throw refusal;
      const rows = await this.members.lockActorAndMember(user.org_id, user.user_id, t.from_member_id, trx);
      const to = rows.find((r) => r.user_id === user.user_id);
      if (!to) throw new AppError('forbidden', 'you are no longer a member of this organization');
      const from = rows.find((r) => r.id === t.from_member_id);
      if (!from || from.role !== 'owner') throw new AppError('conflict', 'the member who asked is no longer the owner; this transfer cannot be accepted');
      // The old owner first: an organization has one owner at every statement (members_one_owner).
      await this.members.updateRole(user.org_id, from.id, 'admin', trx);
      await this.members.updateRole(user.org_id, to.id, 'owner', trx);
      await this.transfers.decide(user.org_id, t.id, 'accepted', now, trx);
      const changedAt = now.toISOString();
      await this.facts.changed(trx, { org_id: user.org_id, user_id: from.user_id, member_id: from.id, role: 'admin', changed_at: changedAt });
      await this.facts.changed(trx, { org_id: user.org_id, user_id: to.user_id, member_id: to.id, role: 'owner', changed_at: changedAt });
      const decided: OwnershipTransferRow = { ...t, status: 'accepted', decided_at: now };
      await this.tell(trx, decided, 'accepted');
      await this.audit.record(trx, auditEntryOf({ auth, ...origin }, now, { action: 'ownership.transferred', org_id: user.org_id, target: { type: 'organization', id: user.org_id }, details: { transfer_id: t.id, from_user_id: from.user_id, to_user_id: to.user_id } }));
      return decided;
    });
    this.facts.kick();
    this.audit.kick();
    return toTransfer(row, this.clock.now());
  }

  async cancel(auth: AuthContext, id: string): Promise<OwnershipTransfer> {
    const user = userOf(authorize(auth, 'ownership.transfer'));
    const row = await this.transact(async (trx) => {
      const now = this.clock.now();
      const t = await this.transfers.lock(user.org_id, id, trx);
      if (!t) throw AppError.notFound('ownership transfer');
      // Decided first: a cancel that lost to an acceptance hears 409, though its sender is no longer the owner.
      const refusal = decisionRefusal(t, now);
      if (refusal) throw refusal;
      const me = await this.members.findByUser(user.org_id, user.user_id, trx, true);
      if (!me || me.role !== 'owner') throw new AppError('forbidden', `only the owner can cancel an ownership transfer; your role is ${me?.role ?? 'none'}`);
      await this.transfers.decide(user.org_id, t.id, 'cancelled', now, trx);
      const decided: OwnershipTransferRow = { ...t, status: 'cancelled', decided_at: now };
      await this.tell(trx, decided, 'cancelled');
      return decided;
    });
    this.facts.kick();
    return toTransfer(row, this.clock.now());
  }

  /** Both parties' mails about the request, queued in its transaction; a party auth no longer knows gets none. */
  private async tell(trx: OrgsTx, t: OwnershipTransferRow, event: Event): Promise<void> {
    const found = await this.users.profiles([t.from_user_id, t.to_user_id]);
    const byId = new Map(found.map((p) => [p.id, p]));
    const owner = byId.get(t.from_user_id);
    const newOwner = byId.get(t.to_user_id);
    const orgName = (await this.orgName(trx, t.org_id)) ?? t.org_id;
    const label = (p: UserProfile | undefined, fallback: string) => p?.name ?? p?.email ?? fallback;
    const base = { transfer_id: t.id, org_name: orgName, owner: label(owner, t.from_user_id), new_owner: label(newOwner, t.to_user_id) };
    for (const [recipient, profile] of [['owner', owner], ['new_owner', newOwner]] as const) {
      if (!profile) continue;
      const id = newId('systemMail');
      const mail: SystemMail =
        event === 'requested'
          ? { id, to: profile.email, template: 'ownership_transfer.requested', data: { ...base, recipient, expires_at: t.expires_at.toISOString() } }
          : { id, to: profile.email, template: event === 'accepted' ? 'ownership_transfer.accepted' : 'ownership_transfer.cancelled', data: { ...base, recipient } };
      await this.mail.queue(trx, mail);
    }
  }
}
