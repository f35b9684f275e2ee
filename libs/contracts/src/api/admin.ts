/**
 * HTTP and RPC shapes of the platform operator's surface (issue 28). Admin keys: `mra_` and 43
 * base62 characters, shown once, stored as SHA-256, with a name and an optional expiry; they
 * act on admin routes only, and tenant credentials never do.
 */
import { z } from 'zod';
import { emailAddress } from '../address';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

export const ADMIN_KEY_PREFIX = 'mra_';
export const ADMIN_KEY_PATTERN = /^mra_[0-9A-Za-z]{43}$/;

export const adminKeyCreateBody = z.strictObject({
  name: z.string().trim().min(1, 'give the key a name (who or what uses it)').max(100),
  /** When it stops working; none: until revoked. */
  expires_at: isoTimestamp.optional(),
});

export const adminKey = z.object({
  id: idSchema('adminKey'),
  name: z.string(),
  /** The first characters of the key, to tell keys apart (`mra_` and 4 more). */
  key_prefix: z.string(),
  /** The admin key that created it; null for one made by the command (cli.js create-key). */
  created_by: idSchema('adminKey').nullable(),
  created_at: isoTimestamp,
  expires_at: isoTimestamp.nullable(),
  last_used_at: isoTimestamp.nullable(),
  revoked_at: isoTimestamp.nullable(),
});
export type AdminKey = z.infer<typeof adminKey>;

/** The answer to a creation: the key itself, shown this once. */
export const adminKeyCreated = adminKey.extend({ key: z.string() });
export const adminKeyId = z.object({ id: idSchema('adminKey') });
export const adminKeyList = pageOf(adminKey);

/** For the gateway: who an admin key is (unknown, revoked or expired: 401). */
export const adminKeyVerifyRequest = z.object({ key: z.string().min(1).max(256) });
export const adminKeyVerification = z.object({ admin_key_id: idSchema('adminKey') });

/**
 * A person's account as the platform's operators see it (GET /api/v1/admin/users...): its
 * state (live, deleted within its recovery window, suspended) and its organizations.
 */
export const adminUser = z.object({
  id: idSchema('user'),
  email: z.string(),
  name: z.string().nullable(),
  email_verified: z.boolean(),
  created_at: isoTimestamp,
  /** Deleted by its owner (recoverable for 30 days); null when live. */
  deleted_at: isoTimestamp.nullable(),
  /** Suspended by an operator: no sign-in, its API keys do not act; null when not. */
  suspended_at: isoTimestamp.nullable(),
  suspension_reason: z.string().nullable(),
  organizations: z.array(z.object({ org_id: idSchema('organization'), org_name: z.string(), role: z.string() })),
});
export type AdminUser = z.infer<typeof adminUser>;

/** Find people by address (exact, case-insensitive) or by id. */
export const adminUserSearch = z.strictObject({
  email: emailAddress.optional(),
  id: idSchema('user').optional(),
}).refine((q) => (q.email === undefined) !== (q.id === undefined), { message: 'give email or id (one of them)', path: ['email'] });
export const adminUserList = z.object({ data: z.array(adminUser), next_page_token: z.null() });
export const adminUserId = z.object({ id: idSchema('user') });

export const USER_SUSPENSION_REASON_MAX = 500;
export const userSuspendBody = z.strictObject({
  /** Why: kept with the suspension and in the audit log (the person is not told it). */
  reason: z.string().trim().min(1, 'say why the account is suspended').max(USER_SUSPENSION_REASON_MAX),
});
export const userSuspendRequest = userSuspendBody.extend({ id: idSchema('user') });
