/**
 * Changing the account's email address, signed in:
 * - asking proves again who the person is (identity-proof.ts); the address of the account
 *   already is 400, one another account has (live, or deleted and not yet purged) 409
 *   `email_taken`; a code and a link go to the new address (one-time codes of purpose
 *   `email_change`, the row's email the new address; at most one a minute and 5 an hour, a
 *   newer one replacing the open one), a notice to the old one (nothing in it changes anything);
 * - the token of the link, or the code, confirms it, signed in to the same account: the
 *   address is changed and counts as verified, every other session ends (this one goes on), and
 *   codes mailed to the old address stop working (they prove that address only). An address
 *   another account took meanwhile is 409 `email_taken`, and nothing changes.
 */
import { AppError, newId, type User } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { CredentialRepository } from '../repo/credential.repository';
import type { OneTimeCodeRow } from '../repo/one-time-code.repository';
import type { IdentityProof } from './identity-proof';
import type { OneTimeCodes } from './one-time-codes';
import type { AccountOutbox, DeletedAccounts, Transact, Users } from './ports';
import type { Caller } from './sessions';
import { endSessions } from './sessions-ended';
import { toUser } from './users';

const TAKEN = 'an account with this email already exists';

export class EmailChange {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveById' | 'findSessionOfUser'>,
    private readonly addresses: Pick<DeletedAccounts, 'findByEmail'>,
    private readonly credentials: Pick<CredentialRepository, 'changeEmail' | 'revokeSessionsOf'>,
    private readonly codes: Pick<OneTimeCodes, 'wait' | 'issue' | 'byToken' | 'byUserCode' | 'use'>,
    private readonly proof: Pick<IdentityProof, 'require'>,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
    private readonly settings: { accessTokenTtlSeconds: number },
  ) {}

  async request(me: Caller, req: { new_email: string; current_password?: string | undefined }): Promise<void> {
    const user = await this.users.findLiveById(me.user_id);
    if (!user) throw AppError.notFound('user');
    await this.proof.require(user, await this.users.findSessionOfUser(me.user_id, me.session_id), req.current_password, 'current_password');
    if (req.new_email === user.email) throw new AppError('invalid_request', `${user.email} is the address of this account already`, { details: [{ path: 'body.new_email', message: 'is the current address' }] });
    if (await this.addresses.findByEmail(req.new_email)) throw new AppError('email_taken', TAKEN, { details: [{ path: 'body.new_email', message: 'is taken' }] });
    await this.transact(async (tx) => {
      const wait = await this.codes.wait(user.id, 'email_change', tx);
      if (wait !== undefined) throw new AppError('rate_limited', `an email change mail was sent moments ago; another may be sent in ${wait} s (at most one a minute and 5 an hour)`, { retryAfterSeconds: wait });
      const issued = await this.codes.issue(tx, { id: user.id, email: req.new_email }, 'email_change');
      if (!issued) throw new AppError('rate_limited', 'an email change mail is being sent at this moment; wait for it', { retryAfterSeconds: 60 });
      await this.outbox.mail(tx, { id: newId('systemMail'), to: req.new_email, template: 'email_change', data: issued });
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'email_change_requested', data: { new_email: req.new_email, requested_at: this.clock.now().toISOString() } });
    });
    this.outbox.kick();
  }

  async confirm(me: Caller, req: { token?: string | undefined; code?: string | undefined }): Promise<User> {
    const row = await this.find(me.user_id, req);
    // Another account's link proves nothing here: answered as an unknown one.
    if (row.user_id !== me.user_id) throw new AppError('invalid_code', 'this link is unknown, was used already, or a newer mail replaced it; ask for a new mail');
    const user = await this.users.findLiveById(me.user_id);
    if (!user) throw AppError.notFound('user');
    const now = this.clock.now();
    const changed = await this.transact(async (tx) => {
      await this.codes.use(tx, row);
      const moved = await this.credentials.changeEmail(user.id, row.email, now, tx);
      if (!moved) throw new AppError('email_taken', `${row.email} was taken by another account since the change was asked for; ask again with another address`);
      await endSessions(tx, { credentials: this.credentials, outbox: this.outbox, accessTokenTtlSeconds: this.settings.accessTokenTtlSeconds }, user.id, { reason: 'email_changed', now, except: me.session_id });
      return moved;
    });
    this.outbox.kick();
    return toUser(changed);
  }

  private find(userId: string, req: { token?: string | undefined; code?: string | undefined }): Promise<OneTimeCodeRow> {
    if (req.token !== undefined) return this.codes.byToken('email_change', req.token);
    if (req.code !== undefined) return this.codes.byUserCode('email_change', userId, req.code);
    throw new AppError('invalid_request', 'give the token of the mail sent to the new address, or its code');
  }
}
