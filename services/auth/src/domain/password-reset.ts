/**
 * Password reset by mail. Asking answers at once and the same for every address: the address
 * is looked up, and a mail queued, only after the answer (AfterAnswer), so neither the answer
 * nor its timing says whether an account has it. A mail is made at most once a minute and 5
 * times an hour per account; past that, asking again silently sends nothing. The token of the
 * link, or the code with the address, sets a new password (signup's rules) once: every session
 * of the account then ends (their access tokens are refused within a second), the address
 * counts as verified (the mail reached it), and a notice goes to it.
 */
import { AppError, newId } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { CredentialRepository } from '../repo/credential.repository';
import type { OneTimeCodeRow } from '../repo/one-time-code.repository';
import { AfterAnswer } from './after-answer';
import type { AttemptGuard } from './attempt-guard';
import type { OneTimeCodes } from './one-time-codes';
import type { Passwords } from './passwords';
import type { AccountOutbox, Transact, Users } from './ports';
import { endSessions } from './sessions-ended';

export interface PasswordResetSettings {
  accessTokenTtlSeconds: number;
  /** What went wrong after an answer was given (nobody is waiting to be told). */
  onError(err: unknown): void;
  /** A request dropped: too many were waiting. */
  onDropped(): void;
}

export type ResetRequest = { token?: string | undefined; email?: string | undefined; code?: string | undefined; new_password: string };

/** Requests worked on at once, and waiting, per instance. */
const CONCURRENCY = 4;
const MAX_QUEUED = 1_000;

export class PasswordReset {
  private readonly requests: AfterAnswer<string>;

  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveByEmail' | 'findLiveById' | 'updatePasswordHash'>,
    private readonly credentials: Pick<CredentialRepository, 'markEmailVerified' | 'revokeSessionsOf'>,
    private readonly passwords: Pick<Passwords, 'hash'>,
    private readonly codes: Pick<OneTimeCodes, keyof OneTimeCodes>,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
    private readonly settings: PasswordResetSettings,
    /** Wrong codes per email, known or not, beside each code's own 5 attempts; a reset lifts the sign-in lock (attempt-guard.ts). */
    private readonly guard: Pick<AttemptGuard, 'attemptWithin' | 'forget'>,
  ) {
    this.requests = new AfterAnswer((email) => this.mailCode(email), { concurrency: CONCURRENCY, maxQueued: MAX_QUEUED, onError: settings.onError, onDropped: settings.onDropped });
  }

  /** Returns at once, whatever the address; the mail (if any) follows. */
  request(email: string): void {
    this.requests.add(email);
  }

  /** Resolves once the requests taken have been worked on (shutdown, tests). */
  settled(): Promise<void> {
    return this.requests.settled();
  }

  async reset(req: ResetRequest): Promise<void> {
    const row = await this.find(req);
    const user = await this.users.findLiveById(row.user_id);
    if (!user || user.email !== row.email) throw new AppError('invalid_code', 'this mail was sent to an address the account no longer has; ask for a new mail');
    const hash = await this.passwords.hash(req.new_password);
    const now = this.clock.now();
    await this.transact(async (tx) => {
      await this.codes.use(tx, row);
      await this.users.updatePasswordHash(user.id, hash, now, tx);
      await this.credentials.markEmailVerified(user.id, now, tx);
      await endSessions(tx, { credentials: this.credentials, outbox: this.outbox, accessTokenTtlSeconds: this.settings.accessTokenTtlSeconds }, user.id, { reason: 'password_reset', now });
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'password_changed', data: { how: 'reset', changed_at: now.toISOString() } });
    });
    this.outbox.kick();
    // The owner proved the address and set a new password: the guesses at the old one, and at codes, no longer matter.
    await Promise.all([this.guard.forget('login', user.email), this.guard.forget('password_reset', user.email)]);
  }

  private async mailCode(email: string): Promise<void> {
    const user = await this.users.findLiveByEmail(email);
    if (!user) return;
    const queued = await this.transact(async (tx) => {
      if ((await this.codes.wait(user.id, 'password_reset', tx)) !== undefined) return false;
      const issued = await this.codes.issue(tx, user, 'password_reset');
      if (!issued) return false;
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'password_reset', data: issued });
      return true;
    });
    if (queued) this.outbox.kick();
  }

  private find(req: ResetRequest): Promise<OneTimeCodeRow> {
    if (req.token !== undefined) return this.codes.byToken('password_reset', req.token);
    const { email, code } = req;
    if (email !== undefined && code !== undefined) return this.guard.attemptWithin('password_reset', email, (tx) => this.codes.byCode('password_reset', email, code, tx));
    throw new AppError('invalid_request', 'give the token of the mail, or its code with email');
  }
}
