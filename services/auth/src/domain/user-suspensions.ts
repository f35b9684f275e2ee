/**
 * Accounts as the platform's operators see them, and their suspension (issue 28, part 5).
 * - Operators find an account by address or id, in any state until it is purged.
 * - Suspending ends every session of the person (one revocation fact each, in the same
 *   transaction, so gateways refuse their access tokens within a second), and until it is
 *   lifted no sign-in of any kind opens a session (SessionStart asks `isSuspended`) and the
 *   API keys the person created do not act (auth.apikey.verify refuses them; gateways drop
 *   them from their caches on the announcement). Lifting it lets the keys act again; sessions
 *   stay ended (the person signs in again).
 * - Both are audited with the operator's admin key and the reason.
 */
import { AppError, auditEntryOf, requireAdmin, type AdminUser, type AuditedCall, type Membership } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { ApiKeyRepository } from '../repo/api-key.repository';
import type { CredentialRepository } from '../repo/credential.repository';
import type { DeletedAccountRepository } from '../repo/deleted-account.repository';
import type { UserRow } from '../repo/user.repository';
import type { UserSuspensionRepository, UserSuspensionRow } from '../repo/user-suspension.repository';
import type { AuthTx } from '../repo/tables';
import type { AccountOutbox, OrgsPort, RevocationPort, Transact } from './ports';
import { endSessions } from './sessions-ended';

export function suspendedError(): AppError {
  return new AppError('account_suspended', 'this account is suspended by the operators of this Mailroom deployment; contact them to lift it');
}

export function toAdminUser(user: UserRow, suspension: UserSuspensionRow | undefined, memberships: readonly Membership[]): AdminUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    email_verified: user.email_verified_at !== null,
    created_at: user.created_at.toISOString(),
    deleted_at: user.deleted_at?.toISOString() ?? null,
    suspended_at: suspension?.suspended_at.toISOString() ?? null,
    suspension_reason: suspension?.reason ?? null,
    organizations: memberships.map((m) => ({ org_id: m.org_id, org_name: m.org_name, role: m.role })),
  };
}

export interface UserSuspensionDeps {
  transact: Transact;
  accounts: Pick<DeletedAccountRepository, 'findById' | 'findByEmail'>;
  suspensions: Pick<UserSuspensionRepository, keyof UserSuspensionRepository>;
  credentials: Pick<CredentialRepository, 'revokeSessionsOf'>;
  keys: Pick<ApiKeyRepository, 'liveCreatedBy'>;
  orgs: Pick<OrgsPort, 'memberships'>;
  outbox: AccountOutbox;
  revocations: Pick<RevocationPort, 'apiKeyRevoked'>;
  clock: Clock;
  accessTokenTtlSeconds: number;
}

export class UserSuspensions {
  constructor(private readonly d: UserSuspensionDeps) {}

  /**
   * Whether the person may not open a session: in `tx`, the transaction that writes the
   * session, the answer holds until it commits (a suspension waits for it, and then ends that
   * session too); without one, a check before any work (SSO and outside providers ask it
   * before linking or joining).
   */
  async isSuspended(userId: string, tx?: AuthTx): Promise<boolean> {
    if (tx) return (await this.d.suspensions.suspendedAtLocked(userId, tx)) !== null;
    return (await this.d.suspensions.find(userId)) !== undefined;
  }

  async search(call: AuditedCall, q: { email?: string | undefined; id?: string | undefined }): Promise<{ data: AdminUser[]; next_page_token: null }> {
    requireAdmin(call.auth);
    const user = q.id !== undefined ? await this.d.accounts.findById(q.id) : await this.d.accounts.findByEmail(q.email ?? '');
    return { data: user ? [await this.view(user)] : [], next_page_token: null };
  }

  async get(call: AuditedCall, id: string): Promise<AdminUser> {
    requireAdmin(call.auth);
    return this.view(await this.existing(id));
  }

  async suspend(call: AuditedCall, id: string, reason: string): Promise<AdminUser> {
    const admin = requireAdmin(call.auth);
    const user = await this.existing(id);
    const now = this.d.clock.now();
    await this.d.transact(async (tx) => {
      // Sign-ins read the suspension under a share lock of this row: one under way finishes first, and its session ends below.
      await this.d.suspensions.lockAccount(id, tx);
      if (!(await this.d.suspensions.insert({ user_id: id, suspended_at: now, reason, suspended_by: admin.admin_key_id }, tx))) {
        throw new AppError('conflict', 'this account is suspended already');
      }
      await endSessions(tx, { credentials: this.d.credentials, outbox: this.d.outbox, accessTokenTtlSeconds: this.d.accessTokenTtlSeconds }, id, { reason: 'account_suspended', now });
      await this.d.outbox.audit(tx, auditEntryOf(call, now, { action: 'user.suspended', org_id: null, target: { type: 'user', id }, details: { email: user.email, reason } }));
    });
    this.d.outbox.kick();
    // Gateways trust a verified key for up to a second; this drops it at once (a lost announcement costs that second).
    for (const key of await this.d.keys.liveCreatedBy(id)) await this.d.revocations.apiKeyRevoked({ key_id: key.id, org_id: key.org_id });
    return this.view(user);
  }

  async unsuspend(call: AuditedCall, id: string): Promise<AdminUser> {
    requireAdmin(call.auth);
    const user = await this.existing(id);
    const now = this.d.clock.now();
    await this.d.transact(async (tx) => {
      const lifted = await this.d.suspensions.delete(id, tx);
      if (!lifted) throw new AppError('conflict', 'this account is not suspended');
      await this.d.outbox.audit(tx, auditEntryOf(call, now, { action: 'user.unsuspended', org_id: null, target: { type: 'user', id }, details: { email: user.email, suspended_at: lifted.suspended_at.toISOString() } }));
    });
    this.d.outbox.kick();
    return this.view(user);
  }

  private async existing(id: string): Promise<UserRow> {
    const user = await this.d.accounts.findById(id);
    if (!user) throw AppError.notFound('user');
    return user;
  }

  private async view(user: UserRow): Promise<AdminUser> {
    const [suspension, memberships] = await Promise.all([this.d.suspensions.find(user.id), this.d.orgs.memberships(user.id)]);
    return toAdminUser(user, suspension, memberships);
  }
}
