/** HTTP and RPC shapes of ownership transfers and invitations. */
import { z } from 'zod';
import { emailAddress } from '../address';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { roleSchema } from '../permissions';
import { isoTimestamp } from '../time';

/** How long an ownership transfer request or an invitation stays open. */
export const OWNERSHIP_TRANSFER_TTL_DAYS = 7;
export const INVITATION_TTL_DAYS = 7;

/**
 * A request to hand an organization to another member. `expired`: still pending in storage
 * but past `expires_at`, so it can no longer be accepted (410).
 */
export const ownershipTransfer = z.object({
  id: idSchema('ownershipTransfer'),
  org_id: idSchema('organization'),
  status: z.enum(['pending', 'accepted', 'cancelled', 'expired']),
  /** The owner who asked, and the member who is to become owner. */
  from_member_id: idSchema('member'),
  from_user_id: idSchema('user'),
  to_member_id: idSchema('member'),
  to_user_id: idSchema('user'),
  created_at: isoTimestamp,
  expires_at: isoTimestamp,
  /** When it was accepted or cancelled. */
  decided_at: isoTimestamp.nullable(),
});
export type OwnershipTransfer = z.infer<typeof ownershipTransfer>;

export const ownershipTransferCreateBody = z.strictObject({ member_id: idSchema('member') });
export const ownershipTransferId = z.object({ id: idSchema('ownershipTransfer') });
/** The pending request of the organization: none or one. */
export const ownershipTransferPending = z.object({ data: z.array(ownershipTransfer).max(1) });

/** Roles an invitation may give: ownership moves only by transfer. */
export const invitableRole = roleSchema.exclude(['owner'], { error: (issue) => `an invitation gives the role admin, member or viewer, not ${JSON.stringify(issue.input)}; ownership moves only by transfer` });

export const invitation = z.object({
  id: idSchema('invitation'),
  org_id: idSchema('organization'),
  email: z.string(),
  role: invitableRole,
  /** `expired`: pending in storage but past `expires_at`. */
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  invited_by_user_id: idSchema('user'),
  created_at: isoTimestamp,
  expires_at: isoTimestamp,
  /** When it was accepted or revoked. */
  decided_at: isoTimestamp.nullable(),
});
export type Invitation = z.infer<typeof invitation>;

export const invitationCreateBody = z.strictObject({
  email: emailAddress,
  role: invitableRole,
});
export const invitationId = z.object({ id: idSchema('invitation') });
export const invitationList = pageOf(invitation);
/** The token of the invitation mail: `mri_` and 43 base64url characters (32 random bytes). */
export const invitationToken = z.string().regex(/^mri_[A-Za-z0-9_-]{43}$/, 'must be the token of an invitation mail (mri_...)');
export const invitationAcceptBody = z.strictObject({ token: invitationToken });
export const invitationAccepted = z.object({
  org_id: idSchema('organization'),
  member_id: idSchema('member'),
  role: invitableRole,
});
