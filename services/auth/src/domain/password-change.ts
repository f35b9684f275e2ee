/**
 * Changing the password while signed in: the current password is asked again (a stolen
 * access token alone must not be enough to take the account over). A wrong one is 403 (the
 * access token is fine; a 401 would have clients refresh it for nothing) and counts: 5 wrong
 * in 15 minutes and the person waits. Then the new password (signup's rules) is set, every
 * other session ends (this one goes on), and a notice goes to the address.
 */
import { AppError, newId } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { CredentialRepository } from '../repo/credential.repository';
import type { Passwords } from './passwords';
import type { AccountOutbox, Transact, Users } from './ports';
import { endSessions } from './sessions-ended';

/** Wrong current passwords per person, as the limiter of the composition root counts them. */
export const CHANGE_FAILURES = { count: 5, windowSeconds: 15 * 60 } as const;

/** Counts failures per key in a window (clients/failure-limiter.client.ts). */
export interface FailureLimiter {
  /** Seconds until `key` may try again; undefined: now. */
  wait(key: string): Promise<number | undefined>;
  failed(key: string): Promise<void>;
}

export class PasswordChange {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveById' | 'updatePasswordHash'>,
    private readonly credentials: Pick<CredentialRepository, 'revokeSessionsOf'>,
    private readonly passwords: Pick<Passwords, 'hash' | 'verify'>,
    private readonly failures: FailureLimiter,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
    private readonly settings: { accessTokenTtlSeconds: number },
  ) {}

  async change(me: { user_id: string; session_id: string }, req: { current_password: string; new_password: string }): Promise<void> {
    const wait = await this.failures.wait(me.user_id);
    if (wait !== undefined) {
      throw new AppError('rate_limited', `the current password was wrong ${CHANGE_FAILURES.count} times in ${CHANGE_FAILURES.windowSeconds / 60} minutes; try again in ${wait} s`, { retryAfterSeconds: wait });
    }
    const user = await this.users.findLiveById(me.user_id);
    if (!user) throw AppError.notFound('user');
    if (!(await this.passwords.verify(user.password_hash, req.current_password))) {
      await this.failures.failed(me.user_id);
      throw new AppError('forbidden', 'current_password is not the password of this account', { details: [{ path: 'body.current_password', message: 'is incorrect' }] });
    }
    const hash = await this.passwords.hash(req.new_password);
    const now = this.clock.now();
    await this.transact(async (tx) => {
      await this.users.updatePasswordHash(user.id, hash, now, tx);
      await endSessions(tx, { credentials: this.credentials, outbox: this.outbox, accessTokenTtlSeconds: this.settings.accessTokenTtlSeconds }, user.id, { reason: 'password_changed', now, except: me.session_id });
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'password_changed', data: { how: 'change', changed_at: now.toISOString() } });
    });
    this.outbox.kick();
  }
}
