/**
 * HTTP and RPC shapes of an account's later life: changing its email address (confirmed from
 * the new address), deleting it (soft: recoverable for 30 days), recovering it, and what
 * auth asks orgs about a person's organizations when they delete or are purged.
 */
import { z } from 'zod';
import { emailAddress } from '../address';
import { idSchema } from '../ids';
import { isoTimestamp } from '../time';
import { PASSWORD_MAX_LENGTH } from './accounts';
import { oneTimeCode } from './verification';

/** The link token of an email change mail: `mre_` and 43 base64url characters (32 random bytes). */
export const emailChangeToken = z.string().regex(/^mre_[A-Za-z0-9_-]{43}$/, 'must be the token of an email change mail (mre_...)');
/** What login gives a deleted account: `mrr_` and 43 base64url characters, 15 minutes. */
export const recoveryToken = z.string().regex(/^mrr_[A-Za-z0-9_-]{43}$/, 'must be the recovery_token of a login answer (mrr_...)');

/** The account's password, asked again; absent only for an account without one (a recent sign-in proves it then). */
const passwordAgain = z.string().min(1).max(PASSWORD_MAX_LENGTH);

/** POST /api/v1/user/me/change-email. */
export const emailChangeBody = z.strictObject({ new_email: emailAddress, current_password: passwordAgain.optional() });

/** POST /api/v1/user/me/change-email/confirm: the token of the mail, or its code (signed in, so no address with it). */
export const emailChangeConfirmBody = z.strictObject({ token: emailChangeToken.optional(), code: oneTimeCode.optional() }).superRefine((r, ctx) => {
  if (r.token !== undefined && r.code !== undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'give the token alone, or the code alone, not both' });
  if (r.token === undefined && r.code === undefined) ctx.addIssue({ code: 'custom', path: ['code'], message: 'give the token of the mail sent to the new address, or its code' });
});

/** DELETE /api/v1/user/me. */
export const accountDeleteBody = z.strictObject({ password: passwordAgain.optional() });
/** The answer of a deletion: until when login and POST /api/v1/user/me/recover bring the account back. */
export const accountDeleted = z.object({ deleted_at: isoTimestamp, recover_before: isoTimestamp });

/** POST /api/v1/user/me/recover. */
export const accountRecoverBody = z.strictObject({ recovery_token: recoveryToken });

/** For auth (services only): the organizations a person owns, with how many members each has (the owner included). */
export const ownedOrganizations = z.object({
  data: z.array(z.object({ org_id: idSchema('organization'), org_name: z.string(), members: z.number().int().positive() })),
});
export type OwnedOrganization = z.infer<typeof ownedOrganizations>['data'][number];

/** For auth's purge (services only): what orgs removed of a person. */
export const userPurged = z.object({
  memberships_removed: z.number().int().nonnegative(),
  /** Organizations the person was the only member of, deleted with every environment (each announced as deleted). */
  organizations_deleted: z.array(idSchema('organization')),
  /** Organizations the person owned with others (members who joined after the deletion): ownership passed on. */
  ownership_passed: z.array(idSchema('organization')),
});
export type UserPurged = z.infer<typeof userPurged>;
