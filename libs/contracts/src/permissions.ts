/**
 * Who may do what: the one place every service asks. An operation open to any tenant (a
 * user or an API key acting in its own org and environment: mail, inboxes, webhooks...)
 * takes `tenantOf`; one that needs more names a permission here, and the table says which
 * roles hold it and whether an API key does. The organizations issue grows the table
 * (roles, scopes, every route); the check stays this function.
 */
import { AppError } from './errors';
import { isTenant, ROLES, type AuthContext, type Role, type TenantContext } from './auth-context';

/** The org and environment a tenant-owned row belongs to; every tenant query filters on both. */
export interface Tenant {
  org_id: string;
  env_id: string;
}

interface Grant {
  roles: readonly Role[];
  /** Whether an API key (bound to one org and environment, no role) holds it. */
  apiKeys: boolean;
  /** What it allows, for the refusal: "an API key cannot <action>". */
  action: string;
}

export const PERMISSIONS = {
  'apiKeys.read': { roles: ROLES, apiKeys: false, action: 'list or read API keys' },
  'apiKeys.write': { roles: ['owner', 'admin'], apiKeys: false, action: 'create or delete API keys' },
  'organization.update': { roles: ['owner', 'admin'], apiKeys: false, action: 'change the organization' },
} as const satisfies Record<string, Grant>;

export type Permission = keyof typeof PERMISSIONS;

/** The caller as a tenant (a user or an API key, acting in one org and environment), or 401. */
export function tenantOf(auth: AuthContext): TenantContext {
  if (!isTenant(auth)) throw new AppError('unauthorized', 'this operation needs a user or API key credential');
  return auth;
}

/** The caller's org and environment, for queries. */
export function tenantScope(auth: AuthContext): Tenant {
  const t = tenantOf(auth);
  return { org_id: t.org_id, env_id: t.env_id };
}

export function can(auth: TenantContext, permission: Permission): boolean {
  const grant: Grant = PERMISSIONS[permission];
  return auth.kind === 'api_key' ? grant.apiKeys : grant.roles.includes(auth.role);
}

/** The tenant caller if it holds the permission; 401 for no tenant credential, 403 for too little. */
export function authorize(auth: AuthContext, permission: Permission): TenantContext {
  const tenant = tenantOf(auth);
  if (can(tenant, permission)) return tenant;
  const grant: Grant = PERMISSIONS[permission];
  throw new AppError(
    'forbidden',
    tenant.kind === 'api_key'
      ? `an API key cannot ${grant.action}; use a user access token`
      : `only the ${grant.roles.join(' or ')} of the organization can ${grant.action}; your role is ${tenant.role}`,
  );
}

/** Operations only services call (never the gateway on a client's behalf). */
export function requireService(auth: AuthContext): Extract<AuthContext, { kind: 'service' }> {
  if (auth.kind !== 'service') throw new AppError('forbidden', 'internal operation');
  return auth;
}
