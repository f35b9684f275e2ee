/**
 * Proving again, signed in, that the person is the account's holder, before what a stolen
 * access token alone must not do (deleting the account, moving it to another address):
 * - an account with a password: the password, checked against the failure limiter that also
 *   counts change-password's (5 wrong in 15 minutes, then 429); wrong is 403, not 401 (the
 *   access token is fine, and clients refresh on 401);
 * - an account without one (an outside provider's sign-in, once it exists): a session whose
 *   sign-in was less than 5 minutes ago (switch-org carries the sign-in time over, so a new
 *   session made from an old one proves nothing).
 * A second factor, when it exists, is one more branch here.
 */
import { AppError } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { SessionRow, UserRow } from '../repo/user.repository';
import { CHANGE_FAILURES, type FailureLimiter } from './password-change';
import type { Passwords } from './passwords';

/** How recent a sign-in proves the holder of an account without a password. */
export const FRESH_SIGN_IN_MS = 5 * 60_000;

export class IdentityProof {
  constructor(
    private readonly passwords: Pick<Passwords, 'verify'>,
    /** Shared with change-password: guesses through either route count together. */
    private readonly failures: FailureLimiter,
    private readonly clock: Clock,
  ) {}

  /**
   * Throws unless the caller proved now that they hold `user`: `password` (the body field
   * `field`) for an account with one, else a fresh sign-in of `session`.
   */
  async require(user: Pick<UserRow, 'id' | 'password_hash'>, session: Pick<SessionRow, 'authenticated_at' | 'method'> | undefined, password: string | undefined, field: string): Promise<void> {
    if (user.password_hash === null) {
      // An organization's provider vouches for the address, not for the account's holder: its
      // sessions act in that organization and prove nothing about the account as a whole.
      if (session?.method === 'sso') throw new AppError('forbidden', 'a single sign-on session cannot prove who holds this account: sign in with the account\'s own method (password, Google, GitHub) and retry');
      const at = session?.authenticated_at.getTime();
      if (at !== undefined && this.clock.now().getTime() - at < FRESH_SIGN_IN_MS) return;
      throw new AppError('forbidden', `this account has no password: sign in again and retry within ${FRESH_SIGN_IN_MS / 60_000} minutes`);
    }
    if (password === undefined) throw new AppError('invalid_request', `give ${field}: the password of this account`, { details: [{ path: `body.${field}`, message: 'required' }] });
    const wait = await this.failures.wait(user.id);
    if (wait !== undefined) {
      throw new AppError('rate_limited', `the password was wrong ${CHANGE_FAILURES.count} times in ${CHANGE_FAILURES.windowSeconds / 60} minutes; try again in ${wait} s`, { retryAfterSeconds: wait });
    }
    if (!(await this.passwords.verify(user.password_hash, password))) {
      await this.failures.failed(user.id);
      throw new AppError('forbidden', `${field} is not the password of this account`, { details: [{ path: `body.${field}`, message: 'is incorrect' }] });
    }
  }
}
