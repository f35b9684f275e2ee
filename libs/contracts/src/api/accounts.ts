/** HTTP and RPC shapes of users, sessions, organizations, environments and API keys. */
import { z } from 'zod';
import { emailAddress } from '../address';
import { keyPermissionList, keyScopeSchema, permissionSchema, roleSchema } from '../permissions';
import { idSchema } from '../ids';
import { pageOf, pageQuery } from '../pagination';
import { planSchema } from '../plans';
import { isoTimestamp } from '../time';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 1024;

export const user = z.object({
  id: idSchema('user'),
  email: z.string(),
  name: z.string().nullable(),
  email_verified: z.boolean(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type User = z.infer<typeof user>;

export const ORGANIZATION_STATUSES = ['active', 'paused'] as const;
export type OrganizationStatus = (typeof ORGANIZATION_STATUSES)[number];

export const organization = z.object({
  id: idSchema('organization'),
  name: z.string(),
  /** What it may hold (contracts plans.ts); changed when a platform operator approves an upgrade request. */
  plan: planSchema,
  /** paused: every send of the organization is refused (account_paused); mail still arrives. */
  status: z.enum(ORGANIZATION_STATUSES),
  default_env_id: idSchema('environment'),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type Organization = z.infer<typeof organization>;

export const organizationUpdateRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    status: z.enum(ORGANIZATION_STATUSES).optional(),
  })
  .refine((r) => r.name !== undefined || r.status !== undefined, 'give name, status or both');

export const environment = z.object({
  id: idSchema('environment'),
  org_id: idSchema('organization'),
  name: z.string(),
  is_default: z.boolean(),
  created_at: isoTimestamp,
});
export type Environment = z.infer<typeof environment>;

export const membership = z.object({
  org_id: idSchema('organization'),
  org_name: z.string(),
  role: roleSchema,
  default_env_id: idSchema('environment'),
});
export type Membership = z.infer<typeof membership>;

export const tokenFields = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  /** Seconds until access_token expires. */
  expires_in: z.number().int().positive(),
});
export type TokenFields = z.infer<typeof tokenFields>;

export const signupRequest = z.strictObject({
  email: emailAddress,
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`),
  name: z.string().trim().min(1).max(200).optional(),
});

export const sessionResponse = z.object({ user, organization, ...tokenFields.shape });
export type SessionResponse = z.infer<typeof sessionResponse>;

export const loginRequest = z.strictObject({
  email: emailAddress,
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
});

export const refreshRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });

/** PATCH /api/v1/user/me: what a person changes of their own profile. */
export const userUpdateRequest = z
  .strictObject({
    /** Trimmed, 1 to 200 characters; null clears it. */
    name: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .refine((r) => r.name !== undefined, 'give name (a string, or null to clear it)');

/** A live session of the signed-in person (GET /api/v1/user/me/sessions). */
export const session = z.object({
  id: idSchema('session'),
  created_at: isoTimestamp,
  /**
   * When tokens were last issued for it (sign-in, refresh or switch-org). Gateways check
   * access tokens on their own, so use between two refreshes is not seen.
   */
  last_used_at: isoTimestamp,
  /** When it ends unless refreshed before. */
  expires_at: isoTimestamp,
  /** Client address and User-Agent as the gateway saw them when tokens were last issued. */
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  /** How the person signed in for it: password, password_and_mfa, provider (OAuth), sso, or a session it was switched from; null for sessions older than the field. */
  method: z.string().nullable(),
  /** The session of the access token making this request. */
  current: z.boolean(),
});
export type Session = z.infer<typeof session>;
export const sessionList = pageOf(session);

/** The spec's path parameter, named as the spec names it. */
export const sessionParam = z.object({ sessionId: idSchema('session') });
export const sessionsRevoked = z.object({ revoked: z.number().int().nonnegative() });

/** An organization the signed-in person belongs to; `active`: the one their token acts in. */
export const userOrganization = membership.extend({ active: z.boolean() });
export type UserOrganization = z.infer<typeof userOrganization>;
export const userOrganizationList = pageOf(userOrganization);

export const switchOrgRequest = z.strictObject({ org_id: idSchema('organization') });

export const apiKey = z.object({
  id: idSchema('apiKey'),
  name: z.string(),
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  /** The first characters of the key, to recognise it; the key itself is never shown again. */
  key_prefix: z.string(),
  /** full, read_only, send_only, or custom (an explicit list). */
  scope: keyScopeSchema,
  /** What the key holds: its scope's permissions, or its own list. */
  permissions: z.array(permissionSchema),
  created_by: idSchema('user').nullable(),
  created_at: isoTimestamp,
  last_used_at: isoTimestamp.nullable(),
});
export type ApiKey = z.infer<typeof apiKey>;

export const apiKeyCreated = apiKey.extend({ key: z.string() });

export const apiKeyCreateRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    env_id: idSchema('environment').optional(),
    /** full (default: what a member may do in the environment), read_only, send_only; custom with `permissions`. */
    scope: keyScopeSchema.optional(),
    /** An explicit list of permissions (scope custom, which may then be omitted). */
    permissions: keyPermissionList.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.permissions && r.scope !== undefined && r.scope !== 'custom') {
      ctx.addIssue({ code: 'custom', path: ['permissions'], message: `a key of scope ${r.scope} has that scope's permissions; give scope custom (or no scope) with a list` });
    }
    if (r.scope === 'custom' && !r.permissions) ctx.addIssue({ code: 'custom', path: ['permissions'], message: 'a custom key needs its list of permissions' });
  });

export const apiKeyList = pageOf(apiKey);
export const idParam = (kind: Parameters<typeof idSchema>[0]) => z.object({ id: idSchema(kind) });

export const apiKeyVerification = z.object({
  key_id: idSchema('apiKey'),
  org_id: idSchema('organization'),
  env_id: idSchema('environment'),
  scope: keyScopeSchema,
  permissions: z.array(permissionSchema),
});

export const jwk = z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string() });
export const jwks = z.object({ keys: z.array(jwk) });

export { pageQuery };
