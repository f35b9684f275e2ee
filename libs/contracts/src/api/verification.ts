/**
 * HTTP and RPC shapes of email verification, password reset and password change. A mail of
 * either kind carries a 6-digit code and a link token; the API takes the token alone, or
 * the code with the address it was sent to (a code is only ever tried against that one
 * account's code: never against every account's).
 */
import { z } from 'zod';
import { emailAddress } from '../address';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './accounts';

/** The code of a verification or reset mail: 6 digits. */
export const oneTimeCode = z.string().regex(/^\d{6}$/, 'must be the 6-digit code of the mail');
/** The link token of a verification mail: `mrv_` and 43 base64url characters (32 random bytes). */
export const emailVerificationToken = z.string().regex(/^mrv_[A-Za-z0-9_-]{43}$/, 'must be the token of a verification mail (mrv_...)');
/** The link token of a password reset mail: `mrp_` and 43 base64url characters. */
export const passwordResetToken = z.string().regex(/^mrp_[A-Za-z0-9_-]{43}$/, 'must be the token of a password reset mail (mrp_...)');

/** A password being set (signup, reset, change): the signup rules. */
export const newPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

/** The token alone, or the code with its address; never both, never a code without its address. */
function tokenOrCode(r: { token?: string | undefined; email?: string | undefined; code?: string | undefined }, ctx: z.RefinementCtx): void {
  if (r.token !== undefined) {
    if (r.email !== undefined || r.code !== undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'give the token alone, or email and code, not both' });
    return;
  }
  if (r.code === undefined) ctx.addIssue({ code: 'custom', path: ['code'], message: 'give the token of the mail, or its code with email' });
  if (r.email === undefined) ctx.addIssue({ code: 'custom', path: ['email'], message: 'a code is checked against the address it was sent to: give email with it' });
}

/** POST /api/v1/auth/verify-email: `{token}` or `{email, code}`. */
export const verifyEmailRequest = z
  .strictObject({ token: emailVerificationToken.optional(), email: emailAddress.optional(), code: oneTimeCode.optional() })
  .superRefine(tokenOrCode);

/** POST /api/v1/auth/password/reset-request. */
export const passwordResetRequest = z.strictObject({ email: emailAddress });

/** POST /api/v1/auth/password/reset: `{token, new_password}` or `{email, code, new_password}`. */
export const passwordResetBody = z
  .strictObject({ token: passwordResetToken.optional(), email: emailAddress.optional(), code: oneTimeCode.optional(), new_password: newPassword })
  .superRefine(tokenOrCode);

/** POST /api/v1/user/me/change-password. */
export const passwordChangeBody = z.strictObject({ current_password: z.string().min(1).max(PASSWORD_MAX_LENGTH), new_password: newPassword });

/** The answer to a request whose outcome is told by mail (202): the same whatever the address. */
export const mailQueued = z.object({});
