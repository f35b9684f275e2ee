/**
 * Deleting one's own account (soft): the spec's 30-day recovery window, and the rules of the
 * deletion itself.
 * - The person proves again who they are (identity-proof.ts).
 * - The owner of an organization that has other members transfers it first: 409 naming each
 *   such organization (orgs answers who owns what; the rule is here).
 * - The account is marked deleted, every session ends (one revocation fact each, written in
 *   the same transaction, so gateways refuse the access tokens within a second), and a notice
 *   says until when it can be recovered. Memberships stay until the purge, so a recovery gives
 *   back everything.
 * - API keys the person created stop acting while the account is deleted (auth.apikey.verify
 *   refuses them; gateways drop them from their caches on the announcement) and act again once
 *   it is recovered; the purge revokes them.
 * A deletion is recoverable strictly before `deleted_at + 30 days`; from that instant on, the
 * purge may delete the account.
 */
import { AppError, newId, type OwnedOrganization } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { ApiKeyRepository } from '../repo/api-key.repository';
import type { CredentialRepository } from '../repo/credential.repository';
import type { UserRow } from '../repo/user.repository';
import type { IdentityProof } from './identity-proof';
import type { AccountOutbox, DeletedAccounts, OrgsDeparturePort, RevocationPort, Transact, Users } from './ports';
import type { Caller } from './sessions';
import { endSessions } from './sessions-ended';

/** The spec's recovery window of a soft-deleted account. */
export const RECOVERY_WINDOW_MS = 30 * 86_400_000;

/** The instant until which (excluded) an account deleted at `deletedAt` can be recovered. */
export function recoverBefore(deletedAt: Date): Date {
  return new Date(deletedAt.getTime() + RECOVERY_WINDOW_MS);
}

/** Accounts deleted after this instant are still in their window at `now`; those deleted at or before it are past it. */
export function windowStart(now: Date): Date {
  return new Date(now.getTime() - RECOVERY_WINDOW_MS);
}

/** The account as sign-in sees it at `now`: live, or deleted within its window; one past its window is as good as none. */
export function signInAccount(row: UserRow | undefined, now: Date): UserRow | undefined {
  if (!row || row.deleted_at === null) return row;
  return now.getTime() < recoverBefore(row.deleted_at).getTime() ? row : undefined;
}

/** Why a person owning these organizations may not delete their account now; undefined when they may. */
export function ownershipRefusal(owned: readonly OwnedOrganization[]): AppError | undefined {
  const shared = owned.filter((o) => o.members > 1);
  if (shared.length === 0) return undefined;
  const names = shared.map((o) => `"${o.org_name}" (${o.org_id})`).join(', ');
  return new AppError('conflict', `you are the owner of ${names}, which other members belong to: transfer ownership first (POST /api/v1/org/transfer-ownership), or remove the other members, then delete the account`, {
    details: shared.map((o) => ({ path: o.org_id, message: `"${o.org_name}": you own it, and ${o.members - 1} other member(s) belong to it` })),
  });
}

export interface AccountDeletionSettings {
  accessTokenTtlSeconds: number;
}

export class AccountDeletion {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveById' | 'findSessionOfUser'>,
    private readonly accounts: Pick<DeletedAccounts, 'markDeleted'>,
    private readonly credentials: Pick<CredentialRepository, 'revokeSessionsOf'>,
    private readonly keys: Pick<ApiKeyRepository, 'liveCreatedBy'>,
    private readonly proof: Pick<IdentityProof, 'require'>,
    private readonly orgs: Pick<OrgsDeparturePort, 'owned'>,
    private readonly outbox: AccountOutbox,
    private readonly revocations: Pick<RevocationPort, 'apiKeyRevoked'>,
    private readonly clock: Clock,
    private readonly settings: AccountDeletionSettings,
  ) {}

  async delete(me: Caller, req: { password?: string | undefined }): Promise<{ deleted_at: string; recover_before: string }> {
    const user = await this.users.findLiveById(me.user_id);
    if (!user) throw AppError.notFound('user');
    await this.proof.require(user, await this.users.findSessionOfUser(me.user_id, me.session_id), req.password, 'password');
    const refusal = ownershipRefusal(await this.orgs.owned(user.id));
    if (refusal) throw refusal;
    const now = this.clock.now();
    const until = recoverBefore(now).toISOString();
    await this.transact(async (tx) => {
      if (!(await this.accounts.markDeleted(user.id, now, tx))) throw AppError.notFound('user');
      await endSessions(tx, { credentials: this.credentials, outbox: this.outbox, accessTokenTtlSeconds: this.settings.accessTokenTtlSeconds }, user.id, { reason: 'account_deleted', now });
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'account_deleted', data: { deleted_at: now.toISOString(), recover_before: until } });
    });
    this.outbox.kick();
    // Gateways trust a verified key for up to a second; this drops it at once (a lost announcement costs that second).
    for (const key of await this.keys.liveCreatedBy(user.id)) await this.revocations.apiKeyRevoked({ key_id: key.id, org_id: key.org_id });
    return { deleted_at: now.toISOString(), recover_before: until };
  }
}
