/**
 * The audit log (issue 28, part 5): an append-only record of every admin action and of the
 * security-relevant actions of tenants. Each entry is written by the service that did the
 * action, in the transaction that did it (its outbox; admin's own straight into its table),
 * and kept by the admin service for a year. An action belongs to one service: an entry that
 * arrives from another service's subject is refused (AUDIT_ACTIONS).
 */
import { z } from 'zod';
import type { AuthContext } from '../auth-context';
import { idSchema, newId } from '../ids';
import { pageOf, pageQuery } from '../pagination';
import { isoTimestamp } from '../time';

/** Every audited action and the service that does it (the only one whose entries of it are believed). */
export const AUDIT_ACTIONS = {
  'api_key.created': 'auth',
  'api_key.revoked': 'auth',
  'sso.created': 'auth',
  'sso.updated': 'auth',
  'sso.deleted': 'auth',
  'sso.activated': 'auth',
  'user.suspended': 'auth',
  'user.unsuspended': 'auth',
  'member.role_changed': 'orgs',
  'member.removed': 'orgs',
  'ownership.transferred': 'orgs',
  'upgrade_request.approved': 'orgs',
  'upgrade_request.declined': 'orgs',
  'domain.deleted': 'domains',
  'admin_key.created': 'admin',
  'admin_key.revoked': 'admin',
  'export.started': 'admin',
  'export.downloaded': 'admin',
  'alert.updated': 'admin',
} as const;
export type AuditAction = keyof typeof AUDIT_ACTIONS;
export const auditActionSchema = z.enum(Object.keys(AUDIT_ACTIONS) as [AuditAction, ...AuditAction[]]);

/**
 * Who acted: a person, an API key, an admin key, the operator at the command line (the first
 * admin key), or nobody signed in (a link mailed to someone).
 */
export const auditActor = z.object({
  type: z.enum(['user', 'api_key', 'admin_key', 'command', 'anonymous']),
  id: z.string().nullable(),
});
export type AuditActor = z.infer<typeof auditActor>;

export const auditEntry = z.object({
  id: idSchema('auditEntry'),
  at: isoTimestamp,
  action: auditActionSchema,
  actor: auditActor,
  /** The organization acted on; null for platform-wide actions (admin keys, users). */
  org_id: idSchema('organization').nullable(),
  /** What was acted on. */
  target: z.object({ type: z.string().min(1).max(40), id: z.string().min(1).max(100) }),
  /** A few facts of the action (a role before and after, a reason); never a secret. */
  details: z.record(z.string(), z.union([z.string().max(2000), z.number(), z.boolean(), z.null()])),
  /** The request that did it (the gateway's X-Request-Id), and the client's address as the gateway saw it. */
  request_id: z.string().max(200).nullable(),
  ip: z.string().max(64).nullable(),
});
export type AuditEntry = z.infer<typeof auditEntry>;

/** The actor of an RPC's caller. Service contexts never act for themselves in the log: they pass their caller's. */
export function auditActorOf(auth: AuthContext): AuditActor {
  switch (auth.kind) {
    case 'user':
      return { type: 'user', id: auth.user_id };
    case 'api_key':
      return { type: 'api_key', id: auth.key_id };
    case 'admin':
      return { type: 'admin_key', id: auth.admin_key_id };
    default:
      return { type: 'anonymous', id: null };
  }
}

/** What of a call goes into its entry: the caller, the request id, the client's address. */
export interface AuditedCall {
  auth: AuthContext;
  requestId?: string | undefined;
  client?: { ip?: string | undefined } | undefined;
}

/** What of a call its entry names besides the caller: the request, the client's address. */
export type CallOrigin = Omit<AuditedCall, 'auth'>;

/** The most characters a detail keeps (longer ones are cut, never refused: an action is not failed by its entry). */
export const AUDIT_DETAIL_MAX = 2000;

function fitting(details: AuditEntry['details']): AuditEntry['details'] {
  return Object.fromEntries(Object.entries(details).map(([k, v]) => [k, typeof v === 'string' && v.length > AUDIT_DETAIL_MAX ? `${v.slice(0, AUDIT_DETAIL_MAX - 1)}…` : v]));
}

/** An entry for `action` done by `call` at `at`. */
export function auditEntryOf(
  call: AuditedCall,
  at: Date,
  e: { action: AuditAction; org_id: string | null; target: { type: string; id: string }; details?: AuditEntry['details']; actor?: AuditActor },
): AuditEntry {
  return auditEntry.parse({
    id: newId('auditEntry'),
    at: at.toISOString(),
    action: e.action,
    actor: e.actor ?? auditActorOf(call.auth),
    org_id: e.org_id,
    target: e.target,
    details: fitting(e.details ?? {}),
    request_id: call.requestId ?? null,
    ip: call.client?.ip ?? null,
  });
}

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true, error: `${what} must be an ISO 8601 date and time, e.g. 2026-11-01T00:00:00Z` })
    .optional()
    .describe(`${what}: ISO 8601 date and time (UTC or with an offset); from is included, to is not`);

/** GET /api/v1/admin/audit-log: newest first, filtered. */
export const auditLogQuery = pageQuery
  .extend({
    org_id: idSchema('organization').optional(),
    action: auditActionSchema.optional(),
    actor_id: z.string().min(1).max(100).optional(),
    target_id: z.string().min(1).max(100).optional(),
    from: instant('from'),
    to: instant('to'),
  })
  .strict()
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), { message: 'from must be before to', path: ['from'] });
export const auditLog = pageOf(auditEntry);
