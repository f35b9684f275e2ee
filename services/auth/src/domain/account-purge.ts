/**
 * The purge: accounts whose recovery window has passed (deleted at or before `now - 30 days`)
 * are deleted for good, with what they owned:
 * - in orgs (asked first; repeating it changes nothing): their memberships, and each
 *   organization they were the only member of, deleted with its environments (announced as
 *   deleted, so auth, mailbox and webhooks remove the keys, inboxes and endpoints they held);
 *   one they owned with members who joined after the deletion passes to the longest-standing
 *   admin, else the longest-standing member;
 * - here, in one transaction: the API keys they created revoked (announced after the commit),
 *   then the account with its sessions, refresh tokens, mailed codes and recovery tokens.
 * `now` is given (the periodic job passes the clock's, the operator's command its --now). An
 * account that fails (orgs unavailable) is counted and left for the next run; the others go on.
 */
import type { Clock } from '@mailroom/platform';
import type { ApiKeyRepository } from '../repo/api-key.repository';
import { windowStart } from './account-deletion';
import type { DeletedAccounts, OrgsDeparturePort, RevocationPort, Transact } from './ports';

/** Accounts read per page. */
const PAGE = 100;

export interface PurgeResult {
  accounts: number;
  organizations_deleted: number;
  failed: number;
}

export class AccountPurge {
  constructor(
    private readonly transact: Transact,
    private readonly accounts: Pick<DeletedAccounts, 'deletedBy' | 'purge'>,
    private readonly keys: Pick<ApiKeyRepository, 'revokeCreatedBy'>,
    private readonly orgs: Pick<OrgsDeparturePort, 'purgeUser'>,
    private readonly revocations: Pick<RevocationPort, 'apiKeyRevoked'>,
    private readonly clock: Clock,
    private readonly onError: (err: unknown, userId: string) => void,
  ) {}

  async purge(now: Date): Promise<PurgeResult> {
    const cutoff = windowStart(now);
    const result: PurgeResult = { accounts: 0, organizations_deleted: 0, failed: 0 };
    let after: string | undefined;
    for (;;) {
      const ids = await this.accounts.deletedBy(cutoff, { limit: PAGE, after });
      for (const id of ids) {
        try {
          const deleted = await this.purgeOne(id, cutoff);
          if (deleted !== undefined) {
            result.accounts += 1;
            result.organizations_deleted += deleted;
          }
        } catch (err) {
          result.failed += 1;
          this.onError(err, id);
        }
      }
      if (ids.length < PAGE) return result;
      after = ids.at(-1);
    }
  }

  /** How many organizations went with the account; undefined when it was recovered meanwhile. */
  private async purgeOne(userId: string, cutoff: Date): Promise<number | undefined> {
    const left = await this.orgs.purgeUser(userId);
    const revoked = await this.transact(async (tx) => {
      const keys = await this.keys.revokeCreatedBy(userId, this.clock.now(), tx);
      // Recovered since it was read (only possible with clocks apart): the keys stay too.
      if (!(await this.accounts.purge(userId, cutoff, tx))) throw new Recovered();
      return keys;
    }).catch((err: unknown) => {
      if (err instanceof Recovered) return undefined;
      throw err;
    });
    if (!revoked) return undefined;
    for (const key of revoked) await this.revocations.apiKeyRevoked({ key_id: key.id, org_id: key.org_id });
    return left.organizations_deleted.length;
  }
}

class Recovered extends Error {}
