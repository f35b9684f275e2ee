/**
 * Email verification: signup queues the first mail (code and link) in its own transaction;
 * a signed-in person asks for another (at most once a minute, 5 an hour); the token of the
 * link, or the code with the address, verifies the address it was sent to (not one the
 * account has moved to since). What an unverified person may not do is decided where it is
 * done (orgs: inviting members) from `email_verified` of their profile.
 */
import { AppError, newId, type User } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { OneTimeCodeRow } from '../repo/one-time-code.repository';
import type { AuthTx } from '../repo/tables';
import type { CredentialRepository } from '../repo/credential.repository';
import { toUser } from './users';
import type { AttemptGuard } from './attempt-guard';
import type { IssuedCode, OneTimeCodes } from './one-time-codes';
import type { AccountOutbox, Transact, Users } from './ports';

export type VerifyRequest = { token?: string | undefined; email?: string | undefined; code?: string | undefined };

export class EmailVerification {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveById'>,
    private readonly credentials: Pick<CredentialRepository, 'markEmailVerified'>,
    private readonly codes: Pick<OneTimeCodes, keyof OneTimeCodes>,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
    /** Wrong codes per email, known or not, beside each code's own 5 attempts (attempt-guard.ts). */
    private readonly guard: Pick<AttemptGuard, 'attemptWithin'>,
  ) {}

  /** The first mail, in signup's transaction (no throttle: one signup, one mail). */
  async queueInSignup(tx: AuthTx, user: { id: string; email: string }): Promise<void> {
    const issued = await this.codes.issue(tx, user, 'email_verification');
    if (issued) await this.queue(tx, user.email, issued);
  }

  /** Sends what was committed now (after signup's transaction). */
  kick(): void {
    this.outbox.kick();
  }

  /** Another mail for the signed-in person; the previous code and link stop working. */
  async resend(userId: string): Promise<void> {
    const user = await this.users.findLiveById(userId);
    if (!user) throw AppError.notFound('user');
    if (user.email_verified_at !== null) throw new AppError('conflict', `${user.email} is verified already`);
    await this.transact(async (tx) => {
      const wait = await this.codes.wait(user.id, 'email_verification', tx);
      if (wait !== undefined) throw new AppError('rate_limited', `a verification mail was sent moments ago; another may be sent in ${wait} s (at most one a minute and 5 an hour)`, { retryAfterSeconds: wait });
      const issued = await this.codes.issue(tx, user, 'email_verification');
      if (!issued) throw new AppError('rate_limited', 'a verification mail is being sent at this moment; wait for it', { retryAfterSeconds: 60 });
      await this.queue(tx, user.email, issued);
    });
    this.outbox.kick();
  }

  /** Verifies with the link's token, or the code and the address it was sent to. */
  async verify(req: VerifyRequest): Promise<User> {
    const row = await this.find(req);
    const user = await this.users.findLiveById(row.user_id);
    // The address changed since the mail: it proves the old one, which is no longer the account's.
    if (!user || user.email !== row.email) throw new AppError('invalid_code', 'this mail was sent to an address the account no longer has; ask for a new mail');
    const verified = await this.transact(async (tx) => {
      await this.codes.use(tx, row);
      await this.credentials.markEmailVerified(user.id, this.clock.now(), tx);
      return this.users.findLiveById(user.id, tx);
    });
    if (!verified) throw AppError.notFound('user');
    return toUser(verified);
  }

  private find(req: VerifyRequest): Promise<OneTimeCodeRow> {
    if (req.token !== undefined) return this.codes.byToken('email_verification', req.token);
    const { email, code } = req;
    if (email !== undefined && code !== undefined) return this.guard.attemptWithin('email_verification', email, (tx) => this.codes.byCode('email_verification', email, code, tx));
    throw new AppError('invalid_request', 'give the token of the mail, or its code with email');
  }

  private queue(tx: AuthTx, to: string, issued: IssuedCode): Promise<void> {
    return this.outbox.mail(tx, { id: newId('systemMail'), to, template: 'email_verification', data: issued });
  }
}
