/**
 * Invitations: owners and admins invite a person by email with a role (admin, member or
 * viewer: ownership moves only by transfer); the person accepts with the single-use token of
 * the mail, signed in with an account of that address. The rules:
 * - the token is 32 random bytes, stored only as its SHA-256, sent once by mail (mail.system)
 *   and never returned by the API or logged;
 * - an invitation expires INVITATION_TTL_DAYS after it was made (410 `expired` on accept);
 * - members and pending invitations together are limited by the organization's plan: a new
 *   invitation is refused (403 plan_limit) when they fill it, and an acceptance when the
 *   members alone do (an invitation replaced by a new one frees its place first);
 * - only a person whose address is verified (auth) may invite (403 `email_unverified`);
 * - inviting an address that is a member's already is 409; inviting an address with a pending
 *   invitation replaces it (the old token stops working, a new mail goes out: a resend);
 * - accepting: unknown token 404; an account of another address 403 (compared without case);
 *   revoked or used 409; a member already 409; otherwise the membership is made, the
 *   invitation marked used and the membership fact written, in one transaction.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  AppError,
  authorize,
  pageCursor,
  encodePageToken,
  idSchema,
  INVITATION_TTL_DAYS,
  newId,
  ROLE_PERMISSIONS,
  userOf,
  type AuthContext,
  type Invitation,
  type Role,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { InvitationRepository, InvitationRow } from '../repo/invitation.repository';
import type { MemberRepository, MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import type { MembershipFacts, OrgNameOf, SystemMailPort, Transact, UsersPort } from './ports';
import type { PlanGuard } from './plan-guard';

const DAY_MS = 86_400_000;
const cursor = z.object({ before: idSchema('invitation') });

/** A new token and the hash that is stored. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = `mri_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashInvitationToken(token) };
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function invitationExpired(row: Pick<InvitationRow, 'status' | 'expires_at'>, now: Date): boolean {
  return row.status === 'pending' && row.expires_at.getTime() <= now.getTime();
}

export function toInvitation(row: InvitationRow, now: Date): Invitation {
  return {
    id: row.id,
    org_id: row.org_id,
    email: row.email,
    role: row.role,
    status: invitationExpired(row, now) ? 'expired' : row.status,
    invited_by_user_id: row.invited_by_user_id,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
  };
}

/** Why the invitation cannot be accepted now; undefined when it can. */
export function acceptRefusal(row: InvitationRow, now: Date): AppError | undefined {
  if (row.status === 'accepted') return new AppError('conflict', 'this invitation was already used; an invitation works once');
  if (row.status === 'revoked') return new AppError('conflict', 'this invitation was revoked; ask for a new one');
  if (invitationExpired(row, now)) return new AppError('expired', `this invitation expired at ${row.expires_at.toISOString()}; ask for a new one`);
  return undefined;
}

export interface NewMember {
  id: string;
  org_id: string;
  user_id: string;
  role: Role;
  now: Date;
}

export class Invitations {
  constructor(
    private readonly transact: Transact,
    private readonly invitations: Pick<InvitationRepository, keyof InvitationRepository>,
    private readonly members: Pick<MemberRepository, 'findByUser' | 'list' | 'count'>,
    private readonly addMember: (tx: OrgsTx, member: NewMember) => Promise<void>,
    private readonly users: UsersPort,
    private readonly orgName: OrgNameOf,
    private readonly facts: MembershipFacts,
    private readonly mail: SystemMailPort,
    private readonly plan: PlanGuard,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, req: { email: string; role: Exclude<Role, 'owner'> }): Promise<Invitation> {
    const user = userOf(authorize(auth, 'members.manage'));
    if (await this.isMember(user.org_id, req.email)) throw new AppError('conflict', `${req.email} is a member of this organization already`);
    const inviter = (await this.users.profiles([user.user_id]))[0];
    // Who invites is someone whose address is theirs (auth's verification): no invitations from throwaway accounts.
    if (!inviter?.email_verified) throw new AppError('email_unverified', 'verify your email address before inviting members: use the code or link of the verification mail (POST /api/v1/auth/verify-email; another mail: POST /api/v1/user/me/verify-email/resend)');
    const { token, hash } = newInvitationToken();
    const row = await this.transact(async (trx) => {
      // The inviter's role as it is now (a token's may be a second old).
      const me = await this.members.findByUser(user.org_id, user.user_id, trx, true);
      if (!me || !ROLE_PERMISSIONS[me.role].includes('members.manage')) throw new AppError('forbidden', `only the owner or an admin can invite; your role is ${me?.role ?? 'none'}`);
      const now = this.clock.now();
      const previous = await this.invitations.lockPendingFor(user.org_id, req.email, trx);
      if (previous) await this.invitations.decide(user.org_id, previous.id, { status: 'revoked', at: now }, trx);
      // After the replaced invitation is revoked: a resend at the limit takes the place it frees.
      await this.plan.roomForOneMore(trx, user.org_id, 'members', async () => (await this.members.count(user.org_id, trx)) + (await this.invitations.countPending(user.org_id, now, trx)));
      const made: InvitationRow = {
        id: newId('invitation'),
        org_id: user.org_id,
        email: req.email,
        role: req.role,
        token_hash: hash,
        status: 'pending',
        invited_by_user_id: user.user_id,
        created_at: now,
        expires_at: new Date(now.getTime() + INVITATION_TTL_DAYS * DAY_MS),
        decided_at: null,
        member_id: null,
      };
      // Two invitations of one new address at once: the first made wins, the other is told.
      if (!(await this.invitations.insert(made, trx))) throw new AppError('conflict', `an invitation to ${req.email} is being made at this moment; list the invitations, or try again`);
      await this.mail.queue(trx, {
        id: newId('systemMail'),
        to: made.email,
        template: 'invitation',
        data: {
          invitation_id: made.id,
          org_name: (await this.orgName(trx, user.org_id)) ?? user.org_id,
          inviter: inviter?.name ?? inviter?.email ?? 'A colleague',
          role: made.role,
          token,
          expires_at: made.expires_at.toISOString(),
        },
      });
      return made;
    });
    this.facts.kick();
    return toInvitation(row, this.clock.now());
  }

  async list(auth: AuthContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Invitation[]; next_page_token: string | null }> {
    const { org_id } = authorize(auth, 'members.manage');
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.invitations.list(org_id, { limit: q.limit + 1, before });
    const page = rows.slice(0, q.limit);
    const now = this.clock.now();
    const last = page.at(-1);
    return { data: page.map((r) => toInvitation(r, now)), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async revoke(auth: AuthContext, id: string): Promise<void> {
    const { org_id } = authorize(auth, 'members.manage');
    await this.transact(async (trx) => {
      const row = await this.invitations.lock(org_id, id, trx);
      if (!row) throw AppError.notFound('invitation');
      if (row.status !== 'pending') throw new AppError('conflict', `this invitation was already ${row.status === 'accepted' ? 'used' : 'revoked'}`);
      await this.invitations.decide(org_id, id, { status: 'revoked', at: this.clock.now() }, trx);
    });
  }

  async accept(auth: AuthContext, token: string): Promise<{ org_id: string; member_id: string; role: Exclude<Role, 'owner'> }> {
    const user = userOf(auth);
    const me = (await this.users.profiles([user.user_id]))[0];
    const result = await this.transact(async (trx) => {
      const row = await this.invitations.lockByTokenHash(hashInvitationToken(token), trx);
      if (!row) throw AppError.notFound('invitation');
      if (!me || me.email.toLowerCase() !== row.email) throw new AppError('forbidden', 'this invitation is for another email address; sign in with the account of the address it was sent to');
      const refusal = acceptRefusal(row, this.clock.now());
      if (refusal) throw refusal;
      if (await this.members.findByUser(row.org_id, user.user_id, trx, true)) throw new AppError('conflict', 'you are a member of this organization already');
      // The invitation held a place; the members alone must still leave one (the plan may have changed, members joined otherwise).
      await this.plan.roomForOneMore(trx, row.org_id, 'members', () => this.members.count(row.org_id, trx));
      const now = this.clock.now();
      const member: NewMember = { id: newId('member'), org_id: row.org_id, user_id: user.user_id, role: row.role, now };
      await this.addMember(trx, member);
      await this.invitations.decide(row.org_id, row.id, { status: 'accepted', at: now, member_id: member.id }, trx);
      await this.facts.changed(trx, { org_id: row.org_id, user_id: user.user_id, member_id: member.id, role: row.role, changed_at: now.toISOString() });
      return { org_id: row.org_id, member_id: member.id, role: row.role };
    });
    this.facts.kick();
    return result;
  }

  /** Whether a member of the organization has this address (auth knows the addresses; one call per 100 members). */
  private async isMember(orgId: string, email: string): Promise<boolean> {
    let after: string | undefined;
    for (;;) {
      const rows: MemberRow[] = await this.members.list(orgId, { limit: 100, after });
      if (rows.length === 0) return false;
      const profiles = await this.users.profiles(rows.map((r) => r.user_id));
      if (profiles.some((p) => p.email.toLowerCase() === email)) return true;
      if (rows.length < 100) return false;
      after = rows.at(-1)!.id;
    }
  }
}
