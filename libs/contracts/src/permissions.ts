/**
 * Who may do what: the one permission table of the platform, and the one check.
 * - ROLE_PERMISSIONS: what each role of an organization holds.
 * - KEY_SCOPES: what an API key holds (`full`, `read_only`, `send_only`, or an explicit list).
 * - ROUTE_ACCESS: what every route of the gateway's route table needs. The gateway checks it
 *   before it calls a service (a route missing here does not build); services re-check with
 *   `authorize` where they act on another principal.
 */
import { z } from 'zod';
import { AppError } from './errors';
import type { AuthContext, TenantContext } from './auth-context';

/** `owner`: exactly one per organization. */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** Every permission. */
export const PERMISSION_NAMES = [
  'org.read',
  'org.manage',
  'members.read',
  'members.manage',
  'keys.read',
  'keys.manage',
  'inboxes.read',
  'inboxes.write',
  'mail.read',
  'mail.send',
  'mail.label',
  'suppressions.read',
  'suppressions.manage',
  'webhooks.read',
  'webhooks.manage',
  'domains.read',
  'domains.manage',
  'environments.read',
  'environments.manage',
  'ownership.transfer',
  'metrics.read',
  'sso.manage',
] as const;
export type Permission = (typeof PERMISSION_NAMES)[number];

/** What each permission allows (for refusals and the docs). */
export const PERMISSIONS: Record<Permission, string> = {
  'org.read': 'read the organization',
  'org.manage': 'change the organization (name, pause and resume) and ask for another plan',
  'members.read': 'list or read the members of the organization',
  'members.manage': "change members' roles or remove members",
  'keys.read': 'list or read API keys',
  'keys.manage': 'create or revoke API keys',
  'inboxes.read': 'list or read inboxes',
  'inboxes.write': 'create, change, pause, resume or delete inboxes',
  'mail.read': 'read messages, threads, attachments and labels',
  'mail.send': 'send, reply to or forward messages',
  'mail.label': 'add or remove labels on messages and threads',
  'suppressions.read': 'list the suppression list',
  'suppressions.manage': 'add to or remove from the suppression list',
  'webhooks.read': 'list or read webhook endpoints and their deliveries',
  'webhooks.manage': 'create, change or delete webhook endpoints, redeliver and recover events',
  'domains.read': 'list or read domains',
  'domains.manage': 'add, verify or delete domains, set their catch-all, rotate their DKIM keys',
  'environments.read': 'list or read environments (owners and admins: all of them; others: those they are members of) and their members',
  'environments.manage': 'create, rename or delete environments, and give members an environment or take it away',
  'ownership.transfer': 'hand the organization to another member (ownership transfer)',
  'metrics.read': 'read activity, summary and deliverability metrics of the environment',
  'sso.manage': 'read, create, change, test, activate or delete the single sign-on configurations of the organization',
};

export const permissionSchema = z.enum(PERMISSION_NAMES, { error: (issue) => `unknown permission ${JSON.stringify(issue.input)}; permissions are ${PERMISSION_NAMES.join(', ')}` });

const VIEWER = ['org.read', 'members.read', 'keys.read', 'inboxes.read', 'mail.read', 'suppressions.read', 'webhooks.read', 'domains.read', 'environments.read', 'metrics.read'] as const satisfies readonly Permission[];
const MEMBER = [...VIEWER, 'inboxes.write', 'mail.send', 'mail.label', 'suppressions.manage', 'webhooks.manage', 'domains.manage'] as const satisfies readonly Permission[];
const ADMIN = [...MEMBER, 'org.manage', 'members.manage', 'keys.manage', 'environments.manage'] as const satisfies readonly Permission[];

/** Each role and what it holds. The owner is the admin that transfer of ownership (later) and nobody else can demote. */
export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  // sso.manage: the owner's alone. Whoever points the organization at a provider can sign in as any
  // account at its verified domains, the owner's included, so an admin must not.
  owner: [...ADMIN, 'ownership.transfer', 'sso.manage'],
  admin: ADMIN,
  member: MEMBER,
  viewer: VIEWER,
};

/**
 * What an API key may hold: a member's powers inside its environment. Keys do not read or
 * manage people, keys and environments (org-wide, done by people with user tokens).
 */
export const KEY_PERMISSIONS: readonly Permission[] = MEMBER.filter((p) => !p.startsWith('members.') && !p.startsWith('keys.') && !p.startsWith('environments.'));

export const KEY_SCOPE_NAMES = ['full', 'read_only', 'send_only'] as const;
export type KeyScope = (typeof KEY_SCOPE_NAMES)[number];

/** The named scopes of API keys and what each holds. */
export const KEY_SCOPES: Record<KeyScope, readonly Permission[]> = {
  full: KEY_PERMISSIONS,
  read_only: KEY_PERMISSIONS.filter((p) => p.endsWith('.read')),
  send_only: ['mail.send'],
};
/** A key's scope as shown: a named one, or `custom` for an explicit list. */
export const keyScopeSchema = z.enum([...KEY_SCOPE_NAMES, 'custom']);

/** A permission a key may hold; an unknown one or one only people hold is a 400. */
export const keyPermissionSchema = permissionSchema.refine((p) => KEY_PERMISSIONS.includes(p), {
  error: (issue) => `an API key cannot hold ${String(issue.input)}; a key holds at most ${KEY_PERMISSIONS.join(', ')}`,
});

/** `permissions` of POST /api/v1/keys: an explicit list (the key's scope is then `custom`). */
export const keyPermissionList = z
  .array(keyPermissionSchema)
  .min(1, 'give at least one permission')
  .max(PERMISSION_NAMES.length)
  .describe(`What the key may do (scope custom); a key holds at most ${KEY_PERMISSIONS.join(', ')}`);

/** The permissions a key of this scope holds (a custom key: its own list, deduplicated, in table order). */
export function keyPermissions(scope: KeyScope | 'custom', custom: readonly string[] | null): Permission[] {
  if (scope !== 'custom') return [...KEY_SCOPES[scope]];
  return KEY_PERMISSIONS.filter((p) => custom?.includes(p));
}

/**
 * What a route needs: a permission; `public` (no credential: session-starting auth routes,
 * signed provider callbacks); `self` (a signed-in person acting on their own account, any
 * role, no API key); `admin` (an admin key; never a tenant credential).
 */
export type RouteAccess = Permission | 'public' | 'self' | 'admin';

/** Every route of the gateway's route table, `METHOD /path` as in the spec, and what it needs. */
export const ROUTE_ACCESS = {
  'POST /api/v1/auth/signup': 'public',
  'POST /api/v1/auth/login': 'public',
  'POST /api/v1/auth/refresh': 'public',
  'POST /api/v1/auth/logout': 'self',
  // A person's own account, sessions and organizations: any role, never an API key.
  'POST /api/v1/auth/switch-org': 'self',
  'GET /api/v1/user/me': 'self',
  'PATCH /api/v1/user/me': 'self',
  'GET /api/v1/user/me/sessions': 'self',
  'DELETE /api/v1/user/me/sessions/{sessionId}': 'self',
  'POST /api/v1/user/me/sessions/revoke-all': 'self',
  'GET /api/v1/user/me/organizations': 'self',
  // Verification and password reset start from a mail, signed out; resend and change are signed in.
  'POST /api/v1/auth/verify-email': 'public',
  'POST /api/v1/auth/password/reset-request': 'public',
  'POST /api/v1/auth/password/reset': 'public',
  'POST /api/v1/user/me/verify-email/resend': 'self',
  'POST /api/v1/user/me/change-password': 'self',
  'POST /api/v1/keys': 'keys.manage',
  'GET /api/v1/keys': 'keys.read',
  'GET /api/v1/keys/{id}': 'keys.read',
  'DELETE /api/v1/keys/{id}': 'keys.manage',
  'GET /api/v1/org': 'org.read',
  'PATCH /api/v1/org': 'org.manage',
  'GET /api/v1/org/usage': 'org.read',
  'GET /api/v1/org/members': 'members.read',
  'GET /api/v1/org/members/{id}': 'members.read',
  'PATCH /api/v1/org/members/{id}': 'members.manage',
  'DELETE /api/v1/org/members/{id}': 'members.manage',
  // Leaving needs no power over others: anyone but the owner may leave.
  'POST /api/v1/org/members/leave': 'self',
  'POST /api/v1/inboxes': 'inboxes.write',
  'GET /api/v1/inboxes': 'inboxes.read',
  'GET /api/v1/inboxes/{id}': 'inboxes.read',
  'PATCH /api/v1/inboxes/{id}': 'inboxes.write',
  'DELETE /api/v1/inboxes/{id}': 'inboxes.write',
  'POST /api/v1/inboxes/{id}/resume': 'inboxes.write',
  'GET /api/v1/inboxes/{inbox_id}/messages': 'mail.read',
  'GET /api/v1/inboxes/{inbox_id}/messages/{message_id}': 'mail.read',
  'GET /api/v1/inboxes/{inbox_id}/messages/{message_id}/raw': 'mail.read',
  'GET /api/v1/inboxes/{inbox_id}/messages/{message_id}/attachments/{attachment_id}': 'mail.read',
  'POST /api/v1/inboxes/{inbox_id}/messages/{message_id}/reply': 'mail.send',
  'POST /api/v1/inboxes/{inbox_id}/messages/{message_id}/reply-all': 'mail.send',
  'POST /api/v1/inboxes/{inbox_id}/messages/{message_id}/forward': 'mail.send',
  'POST /api/v1/inboxes/{inbox_id}/messages/send': 'mail.send',
  'POST /api/v1/attachments': 'mail.send',
  // Signed download links: the link is the credential (the gateway checks its HMAC and expiry).
  'GET /api/v1/downloads/{token}': 'public',
  'GET /api/v1/suppressions': 'suppressions.read',
  'POST /api/v1/suppressions': 'suppressions.manage',
  'DELETE /api/v1/suppressions/{address}': 'suppressions.manage',
  'GET /api/v1/inboxes/{inbox_id}/threads': 'mail.read',
  'GET /api/v1/inboxes/{inbox_id}/threads/{thread_id}': 'mail.read',
  'POST /api/v1/messages/{id}/labels': 'mail.label',
  'DELETE /api/v1/messages/{id}/labels': 'mail.label',
  'POST /api/v1/threads/{id}/labels': 'mail.label',
  'DELETE /api/v1/threads/{id}/labels': 'mail.label',
  'POST /api/v1/labels/batch': 'mail.label',
  'GET /api/v1/labels': 'mail.read',
  'POST /api/v1/providers/ses/notifications': 'public',
  'POST /api/v1/webhooks/endpoints': 'webhooks.manage',
  'GET /api/v1/webhooks/endpoints': 'webhooks.read',
  'GET /api/v1/webhooks/endpoints/{id}': 'webhooks.read',
  'PATCH /api/v1/webhooks/endpoints/{id}': 'webhooks.manage',
  'DELETE /api/v1/webhooks/endpoints/{id}': 'webhooks.manage',
  'GET /api/v1/webhooks/endpoints/{id}/deliveries': 'webhooks.read',
  'POST /api/v1/webhooks/endpoints/{id}/deliveries/{delivery_id}/redeliver': 'webhooks.manage',
  'POST /api/v1/webhooks/endpoints/{id}/recover': 'webhooks.manage',
  'GET /api/v1/webhooks/endpoints/{id}/recoveries/{recovery_id}': 'webhooks.read',
  // Environments: owners and admins see and manage every one; others see those they are members of.
  'POST /api/v1/environments': 'environments.manage',
  'GET /api/v1/environments': 'environments.read',
  'GET /api/v1/environments/{env_id}': 'environments.read',
  'PATCH /api/v1/environments/{env_id}': 'environments.manage',
  'DELETE /api/v1/environments/{env_id}': 'environments.manage',
  'POST /api/v1/environments/{env_id}/members': 'environments.manage',
  'GET /api/v1/environments/{env_id}/members': 'environments.read',
  'DELETE /api/v1/environments/{env_id}/members/{member_id}': 'environments.manage',
  'POST /api/v1/admin/keys': 'admin',
  'GET /api/v1/admin/keys': 'admin',
  'GET /api/v1/admin/keys/{id}': 'admin',
  'DELETE /api/v1/admin/keys/{id}': 'admin',
  'GET /api/v1/admin/health': 'admin',
  'GET /api/v1/admin/health/history': 'admin',
  'GET /api/v1/admin/alerts': 'admin',
  'PATCH /api/v1/admin/alerts/{key}': 'admin',
  'POST /api/v1/admin/orgs/{id}/export': 'admin',
  'GET /api/v1/admin/exports': 'admin',
  'GET /api/v1/admin/exports/{id}': 'admin',
  'GET /api/v1/admin/exports/{id}/download': 'admin',
  // Ownership transfer: started and cancelled by the owner; accepted by its target (any role).
  'POST /api/v1/org/transfer-ownership': 'ownership.transfer',
  'GET /api/v1/org/transfer-ownership/pending': 'members.read',
  'POST /api/v1/org/transfer-ownership/{id}/accept': 'self',
  'POST /api/v1/org/transfer-ownership/{id}/cancel': 'ownership.transfer',
  // Invitations: sent, listed and revoked by owners and admins; accepted by the invitee signed in.
  'POST /api/v1/org/invitations': 'members.manage',
  'GET /api/v1/org/invitations': 'members.manage',
  'DELETE /api/v1/org/invitations/{id}': 'members.manage',
  'POST /api/v1/invitations/accept': 'self',
  // Upgrade requests: asked for by owners and admins signed in; read by anyone who reads the organization.
  'POST /api/v1/org/upgrade-request': 'org.manage',
  'GET /api/v1/org/upgrade-requests': 'org.read',
  'GET /api/v1/org/upgrade-requests/{id}': 'org.read',
  // Outside providers: sign-in starts signed out; links are the signed-in person's own.
  'GET /api/v1/auth/oauth/{provider}': 'public',
  'POST /api/v1/auth/oauth/{provider}/callback': 'public',
  'GET /api/v1/user/me/oauth-providers': 'self',
  'DELETE /api/v1/user/me/oauth-providers/{provider}': 'self',
  'POST /api/v1/user/me/oauth-providers/{provider}': 'self',
  'POST /api/v1/user/me/oauth-providers/{provider}/callback': 'self',
  // Deleting one's account signed in; recovering it signed out (a deleted account has no session).
  'DELETE /api/v1/user/me': 'self',
  'POST /api/v1/user/me/recover': 'public',
  // Changing one's email address, and confirming it from the new address, signed in.
  'POST /api/v1/user/me/change-email': 'self',
  'POST /api/v1/user/me/change-email/confirm': 'self',
  // The second factor: a person's own (any role, never an API key); a login's second step, signed out.
  'GET /api/v1/user/me/mfa': 'self',
  'POST /api/v1/user/me/mfa/enrol': 'self',
  'POST /api/v1/user/me/mfa/confirm': 'self',
  'DELETE /api/v1/user/me/mfa': 'self',
  'POST /api/v1/user/me/mfa/recovery-codes': 'self',
  'POST /api/v1/auth/mfa/verify-login': 'public',
  // Custom domains: managed (added, verified, deleted) as inboxes and webhooks are, by members and full keys (an agent
  // platform adds its customers' domains from its backend); read by every role.
  'POST /api/v1/domains': 'domains.manage',
  'GET /api/v1/domains': 'domains.read',
  'GET /api/v1/domains/{id}': 'domains.read',
  'DELETE /api/v1/domains/{id}': 'domains.manage',
  'POST /api/v1/domains/{id}/verify': 'domains.manage',
  'GET /api/v1/domains/{id}/zone-file': 'domains.read',
  // Metrics (issue 27): aggregates of the environment's mail, read by every role and by full and read-only keys.
  'GET /api/v1/metrics/activity': 'metrics.read',
  'GET /api/v1/metrics/summary': 'metrics.read',
  'GET /api/v1/metrics/deliverability': 'metrics.read',
  'PATCH /api/v1/domains/{id}/catch-all': 'domains.manage',
  // A new DKIM key beside the current one (issue 25, part 7): managed, as verify is.
  'POST /api/v1/domains/{id}/dkim/rotate': 'domains.manage',
  // Upgrade requests, decided by the platform's operators (issue 28 part 5).
  'GET /api/v1/admin/upgrade-requests': 'admin',
  'POST /api/v1/admin/upgrade-requests/{id}/decision': 'admin',
  // The audit log and people's accounts (issue 28 part 5).
  'GET /api/v1/admin/audit-log': 'admin',
  'GET /api/v1/admin/users': 'admin',
  'GET /api/v1/admin/users/{id}': 'admin',
  'POST /api/v1/admin/users/{id}/suspend': 'admin',
  'POST /api/v1/admin/users/{id}/unsuspend': 'admin',
  // Single sign-on (issue 26): configurations are the owners' and admins' (people only: keys never hold sso.manage), read
  // included (they name the provider and its client); a login starts and ends signed out.
  'POST /api/v1/org/sso': 'sso.manage',
  'GET /api/v1/org/sso': 'sso.manage',
  'PATCH /api/v1/org/sso/{configId}': 'sso.manage',
  'DELETE /api/v1/org/sso/{configId}': 'sso.manage',
  'POST /api/v1/org/sso/{configId}/test': 'sso.manage',
  'POST /api/v1/org/sso/{configId}/activate': 'sso.manage',
  'GET /api/v1/auth/sso/{org_identifier}': 'public',
  'POST /api/v1/auth/sso/oidc/callback': 'public',
  'POST /api/v1/auth/sso/saml/callback': 'public',
  'GET /api/v1/auth/sso/saml/metadata/{org_id}': 'public',
} as const satisfies Record<string, RouteAccess>;

const ROUTE_ACCESS_BY_KEY = new Map<string, RouteAccess>(Object.entries(ROUTE_ACCESS));

/** What the route `METHOD /path` needs, or undefined when the table does not name it. */
export function routeAccess(method: string, path: string): RouteAccess | undefined {
  return ROUTE_ACCESS_BY_KEY.get(`${method.toUpperCase()} ${path}`);
}

/** The org and environment a tenant-owned row belongs to; every tenant query filters on both. */
export interface Tenant {
  org_id: string;
  env_id: string;
}

/** The caller as a tenant (a user or an API key, acting in one org and environment), or 401. */
export function tenantOf(auth: AuthContext): TenantContext {
  if (auth.kind !== 'user' && auth.kind !== 'api_key') throw new AppError('unauthorized', 'this operation needs a user or API key credential');
  return auth;
}

/** The caller's org and environment, for queries. */
export function tenantScope(auth: AuthContext): Tenant {
  const t = tenantOf(auth);
  return { org_id: t.org_id, env_id: t.env_id };
}

/** The permissions the caller holds: its role's, or its key's. */
export function permissionsOf(auth: TenantContext): readonly Permission[] {
  return auth.kind === 'api_key' ? auth.permissions : ROLE_PERMISSIONS[auth.role];
}

export function can(auth: TenantContext, permission: Permission): boolean {
  return permissionsOf(auth).includes(permission);
}

/** The tenant caller if it holds the permission; 401 for no tenant credential, 403 for too little. */
export function authorize(auth: AuthContext, permission: Permission): TenantContext {
  const tenant = tenantOf(auth);
  if (can(tenant, permission)) return tenant;
  const action = PERMISSIONS[permission];
  if (tenant.kind === 'api_key') {
    throw new AppError(
      'forbidden',
      KEY_PERMISSIONS.includes(permission)
        ? `this API key does not hold ${permission} (to ${action}); its permissions are ${tenant.permissions.join(', ') || 'none'}`
        : `an API key cannot ${action} (${permission}); use a user access token`,
    );
  }
  const roles = ROLES.filter((r) => ROLE_PERMISSIONS[r].includes(permission));
  throw new AppError('forbidden', `only the ${roles.join(' or ')} of the organization can ${action} (${permission}); your role is ${tenant.role}`);
}

/** The caller as a signed-in person (a user access token), or 403 for an API key, 401 for no tenant. */
export function userOf(auth: AuthContext): Extract<TenantContext, { kind: 'user' }> {
  const tenant = tenantOf(auth);
  if (tenant.kind !== 'user') throw new AppError('forbidden', 'this operation needs a user access token, not an API key');
  return tenant;
}

/** Operations of platform operators: an admin key's context, which only the gateway seals. */
export function requireAdmin(auth: AuthContext): Extract<AuthContext, { kind: 'admin' }> {
  if (auth.kind !== 'admin') throw new AppError('forbidden', 'this operation needs an admin key');
  return auth;
}

/** Operations only services call (never the gateway on a client's behalf). */
export function requireService(auth: AuthContext): Extract<AuthContext, { kind: 'service' }> {
  if (auth.kind !== 'service') throw new AppError('forbidden', 'internal operation');
  return auth;
}
