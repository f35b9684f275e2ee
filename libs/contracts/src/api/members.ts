/** HTTP and RPC shapes of an organization's members. */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { roleSchema } from '../permissions';
import { isoTimestamp } from '../time';

export const member = z.object({
  id: idSchema('member'),
  org_id: idSchema('organization'),
  user_id: idSchema('user'),
  role: roleSchema,
  /** The person's account, read from auth (null when they gave no name, or the account is gone). */
  email: z.string().nullable(),
  name: z.string().nullable(),
  created_at: isoTimestamp,
});
export type Member = z.infer<typeof member>;

export const memberList = pageOf(member);
export const memberId = z.object({ id: idSchema('member') });
/** The new role; `owner` changes hands only by ownership transfer. */
export const memberUpdateBody = z.strictObject({ role: roleSchema });

/** A person's account as other services see it (auth.user.profiles); orgs lets only verified people invite. */
export const userProfile = z.object({ id: idSchema('user'), email: z.string(), name: z.string().nullable(), email_verified: z.boolean() });
export type UserProfile = z.infer<typeof userProfile>;
export const USER_PROFILES_MAX = 100;
