/**
 * How a deleted person proves who they are, and gets their account back, within its window:
 * - login with the right password answers 403 `account_deleted`, its details carrying a
 *   `recovery_token` (`mrr_` + 32 random bytes, stored as its SHA-256, 15 minutes, once) and
 *   `recover_before`; a wrong password answers as for an unknown address (accounts.ts);
 * - `POST /api/v1/user/me/recover {recovery_token}` makes the account live again, mails a
 *   notice, and answers as login does (a new session). Memberships were kept, and the API keys
 *   the person created act again, since they are refused only while their creator is deleted.
 * An unknown or used token is 400 `invalid_code`; an expired one, or a window that ended, 410
 * `expired`. Once purged, the account and its tokens are gone: as unknown.
 */
import { AppError, newId, type SessionResponse } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { UserRow } from '../repo/user.repository';
import { recoverBefore, windowStart } from './account-deletion';
import type { AccountOutbox, ClientInfo, DeletedAccounts, Transact } from './ports';
import type { SessionStart } from './session-start';

export const RECOVERY_TOKEN_PREFIX = 'mrr_';
export const RECOVERY_TOKEN_TTL_MS = 15 * 60_000;

const UNKNOWN = 'this recovery token is unknown or was used already; log in again for a new one';

export class AccountRecovery {
  constructor(
    private readonly transact: Transact,
    private readonly accounts: Pick<DeletedAccounts, 'insertRecoveryToken' | 'findRecoveryToken' | 'useRecoveryToken' | 'findById' | 'restore'>,
    private readonly start: Pick<SessionStart, 'open'>,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
  ) {}

  /** The answer to a sign-in that proved `user`, a deleted account in its window: a new recovery token in the details. */
  async refuseSignIn(user: UserRow): Promise<AppError> {
    if (user.deleted_at === null) throw new AppError('internal_error', 'a live account has nothing to recover');
    const now = this.clock.now();
    const token = randomToken(RECOVERY_TOKEN_PREFIX);
    await this.accounts.insertRecoveryToken({ token_hash: sha256(token), user_id: user.id, created_at: now, expires_at: new Date(now.getTime() + RECOVERY_TOKEN_TTL_MS) });
    const until = recoverBefore(user.deleted_at).toISOString();
    return new AppError(
      'account_deleted',
      `this account was deleted on ${user.deleted_at.toISOString()}; it can be recovered until ${until}: POST /api/v1/user/me/recover with {"recovery_token": ...} of these details, within ${RECOVERY_TOKEN_TTL_MS / 60_000} minutes`,
      {
        details: [
          { path: 'recovery_token', message: token },
          { path: 'recover_before', message: until },
        ],
      },
    );
  }

  async recover(token: string, client: ClientInfo): Promise<SessionResponse> {
    const hash = sha256(token);
    const now = this.clock.now();
    const row = await this.accounts.findRecoveryToken(hash);
    if (!row || row.used_at !== null) throw new AppError('invalid_code', UNKNOWN);
    if (now.getTime() >= row.expires_at.getTime()) throw new AppError('expired', `this recovery token expired at ${row.expires_at.toISOString()}; log in again for a new one`);
    const user = await this.accounts.findById(row.user_id);
    if (!user || user.deleted_at === null) throw new AppError('invalid_code', UNKNOWN);
    const ended = new AppError('expired', `the recovery window of this account ended at ${recoverBefore(user.deleted_at).toISOString()}`);
    if (now.getTime() >= recoverBefore(user.deleted_at).getTime()) throw ended;
    const restored = await this.transact(async (tx) => {
      if (!(await this.accounts.useRecoveryToken(hash, now, tx))) throw new AppError('invalid_code', UNKNOWN);
      const live = await this.accounts.restore(user.id, windowStart(now), now, tx);
      if (!live) throw ended;
      await this.outbox.mail(tx, { id: newId('systemMail'), to: live.email, template: 'account_recovered', data: { recovered_at: now.toISOString() } });
      return live;
    });
    this.outbox.kick();
    return this.start.open(restored, client);
  }
}
