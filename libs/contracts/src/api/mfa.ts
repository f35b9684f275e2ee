/**
 * HTTP and RPC shapes of the second factor (TOTP, RFC 6238: SHA-1, 6 digits, 30 s) and of a
 * login that needs it: enrolment, confirmation, status, removal, recovery codes, and the
 * login's second step (`POST /api/v1/auth/mfa/verify-login`).
 */
import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, sessionResponse } from './accounts';
import { isoTimestamp } from '../time';

/** Recovery codes are handed out ten at a time. */
export const RECOVERY_CODE_COUNT = 10;
/** How long the mfa_token of a login lives, in seconds. */
export const MFA_TOKEN_TTL_SECONDS = 300;

/** Crockford base32 in lower case (no i, l, o, u): 4 groups of 4, 80 random bits. */
const RECOVERY_GROUP = '[0-9a-hjkmnp-tv-z]{4}';
export const RECOVERY_CODE_PATTERN = new RegExp(`^${RECOVERY_GROUP}(-?${RECOVERY_GROUP}){3}$`, 'i');

/** The 6-digit code an authenticator app shows now. */
export const totpCode = z.string().trim().regex(/^\d{6}$/, 'must be the 6-digit code your authenticator app shows');
/** A code that proves the second factor: the authenticator's 6 digits, or a recovery code (xxxx-xxxx-xxxx-xxxx, dashes and case optional). */
export const mfaCode = z
  .string()
  .trim()
  .max(32)
  .refine((c) => /^\d{6}$/.test(c) || RECOVERY_CODE_PATTERN.test(c), 'must be the 6-digit code of your authenticator app, or one of your recovery codes (xxxx-xxxx-xxxx-xxxx)');
/** The token of a login waiting for its second factor: `mrm_` and 43 base64url characters. */
export const mfaToken = z.string().regex(/^mrm_[A-Za-z0-9_-]{43}$/, 'must be the mfa_token the login answered (mrm_...)');

/** GET /api/v1/user/me/mfa. */
export const mfaStatus = z.object({
  enabled: z.boolean(),
  /** When it was turned on; null while off. */
  enabled_at: isoTimestamp.nullable(),
  /** An enrolment was started and waits for its confirmation. */
  enrolment_pending: z.boolean(),
  /** Recovery codes not used yet (0 while off). */
  recovery_codes_left: z.number().int().min(0).max(RECOVERY_CODE_COUNT),
});

/** POST /api/v1/user/me/mfa/enrol: the secret to put in an authenticator app; MFA is on once a code of it is confirmed. */
export const mfaEnrolment = z.object({
  /** The key URI an authenticator app reads (as a QR code): otpauth://totp/... */
  otpauth_uri: z.string(),
  /** The same secret in base32, for typing it in. */
  secret: z.string(),
  algorithm: z.literal('SHA1'),
  digits: z.literal(6),
  period: z.literal(30),
});

/** POST /api/v1/user/me/mfa/confirm. */
export const mfaConfirmBody = z.strictObject({ code: totpCode });

/** Recovery codes, each working once; shown in this answer only. */
export const recoveryCodes = z.object({ recovery_codes: z.array(z.string()).length(RECOVERY_CODE_COUNT) });
export const mfaConfirmed = recoveryCodes.extend({ enabled: z.literal(true), enabled_at: isoTimestamp });

/** DELETE /api/v1/user/me/mfa: the account's password, or a current code (authenticator or recovery); one of them. */
export const mfaRemoveBody = z
  .strictObject({ password: z.string().min(1).max(PASSWORD_MAX_LENGTH).optional(), code: mfaCode.optional() })
  .superRefine((b, ctx) => {
    if ((b.password === undefined) === (b.code === undefined)) ctx.addIssue({ code: 'custom', path: ['password'], message: 'give the password of the account, or a current code (authenticator or recovery), one of them' });
  });

/** POST /api/v1/user/me/mfa/recovery-codes: a current code (authenticator or recovery) replaces every recovery code. */
export const mfaCodeBody = z.strictObject({ code: mfaCode });

/** What login answers when the account has a second factor: no session yet, a token for verify-login. */
export const mfaChallenge = z.object({
  mfa_required: z.literal(true),
  mfa_token: z.string(),
  /** Seconds the mfa_token lives. */
  expires_in: z.number().int().positive(),
});
export type MfaChallenge = z.infer<typeof mfaChallenge>;

/** POST /api/v1/auth/login: a session, or (MFA on) the challenge of its second step. */
export const loginResponse = z.union([sessionResponse, mfaChallenge]);
export type LoginResponse = z.infer<typeof loginResponse>;

/** POST /api/v1/auth/mfa/verify-login. */
export const mfaVerifyLoginBody = z.strictObject({ mfa_token: mfaToken, code: mfaCode });
