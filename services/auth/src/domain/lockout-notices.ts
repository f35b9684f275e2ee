/**
 * The notice of a lock-out (template `account_locked`, through auth's outbox on mail.account):
 * the guard tells each lock once (attempt-guard.ts); the address is looked up, and the mail
 * queued, only after the answer was given (AfterAnswer), so neither the answer nor its timing
 * says whether an account has the address. An identifier without an account gets no mail.
 */
import { newId } from '@mailroom/contracts';
import { AfterAnswer, type AfterAnswerOptions } from './after-answer';
import type { Lockout, LockoutListener } from './attempt-guard';
import type { AccountOutbox, Transact, Users } from './ports';

/** Notices worked on at once, and waiting, per instance. */
const CONCURRENCY = 2;
const MAX_QUEUED = 1_000;

export class LockoutNotices implements LockoutListener {
  private readonly queue: AfterAnswer<Lockout>;

  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveByEmail'>,
    private readonly outbox: AccountOutbox,
    report: Pick<AfterAnswerOptions, 'onError' | 'onDropped'>,
  ) {
    this.queue = new AfterAnswer((lockout) => this.send(lockout), { concurrency: CONCURRENCY, maxQueued: MAX_QUEUED, ...report });
  }

  lockedOut(lockout: Lockout): void {
    this.queue.add(lockout);
  }

  /** Resolves once the notices taken have been worked on (shutdown, tests). */
  settled(): Promise<void> {
    return this.queue.settled();
  }

  private async send(lockout: Lockout): Promise<void> {
    const user = await this.users.findLiveByEmail(lockout.identifier);
    if (!user) return;
    await this.transact((tx) =>
      this.outbox.mail(tx, {
        id: newId('systemMail'),
        to: user.email,
        template: 'account_locked',
        data: { attempt: lockout.kind, failures: lockout.failures, locked_at: lockout.lockedAt.toISOString(), locked_until: lockout.lockedUntil.toISOString() },
      }),
    );
    this.outbox.kick();
  }
}
