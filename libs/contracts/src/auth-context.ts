/**
 * Who is calling, as resolved by the gateway and carried in the `Mr-Auth` header of every
 * RPC. Tenant and admin contexts are honoured only under the gateway's seal (libs/messaging
 * context-seal.ts); who may publish which rpc subject at all is the bus permissions' say
 * (contracts bus-access.ts).
 */
import { z } from 'zod';
import { idSchema } from './ids';
import { permissionSchema, roleSchema } from './permissions';

export const authContext = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('anonymous') }),
  z.object({
    kind: z.literal('user'),
    user_id: idSchema('user'),
    session_id: idSchema('session'),
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    role: roleSchema,
  }),
  z.object({
    kind: z.literal('api_key'),
    key_id: idSchema('apiKey'),
    org_id: idSchema('organization'),
    env_id: idSchema('environment'),
    /** What the key holds (its scope resolved): the gateway and services check it. */
    permissions: z.array(permissionSchema),
  }),
  z.object({ kind: z.literal('admin'), admin_key_id: idSchema('adminKey') }),
  z.object({ kind: z.literal('service'), service: z.string().min(1) }),
  /**
   * A signed download link the gateway verified (issue 31): opens the one object the link
   * names, in this org and environment; no other operation takes it (it is not a tenant).
   */
  z.object({ kind: z.literal('link'), org_id: idSchema('organization'), env_id: idSchema('environment') }),
]);

export type AuthContext = z.infer<typeof authContext>;
export type TenantContext = Extract<AuthContext, { kind: 'user' | 'api_key' }>;

export const ANONYMOUS: AuthContext = { kind: 'anonymous' };

export function isTenant(ctx: AuthContext): ctx is TenantContext {
  return ctx.kind === 'user' || ctx.kind === 'api_key';
}
