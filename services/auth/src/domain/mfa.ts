/**
 * A person's second factor (TOTP): enrolment (a new secret, pending until a code of it is
 * confirmed), confirmation (MFA on, ten recovery codes answered once), status, removal (with
 * the password or a current code) and new recovery codes (with a current code), each change
 * mailed to the person in its transaction; and `checkCode`, the one check of a code for an
 * account, which login's second step and any other step that asks for proof use.
 *
 * The secret is sealed at rest (SecretBox under SECRETS_ENCRYPTION_KEY, bound to the account);
 * a time step is accepted once (the last accepted step is recorded in the transaction that
 * accepts it, under the row's lock); a recovery code works once. A wrong code or password
 * at the signed-in routes is 403 and counts: 5 in 15 minutes and the person waits (429).
 */
import { AppError, newId } from '@mailroom/contracts';
import type { Clock, SecretBox } from '@mailroom/platform';
import type { MfaRepository, MfaTotpRow } from '../repo/mfa.repository';
import type { AuthTx } from '../repo/tables';
import type { FailureLimiter } from './password-change';
import type { Passwords } from './passwords';
import type { AccountOutbox, Transact, Users } from './ports';
import { looksLikeRecoveryCode, newRecoveryCodes, recoveryCodeHash } from './recovery-codes';
import { newTotpSecret, otpauthUri, stepOf, stepUnused, TOTP_PARAMS } from './totp';

/** Wrong codes or passwords per person at the signed-in MFA routes. */
export const MFA_FAILURES = { count: 5, windowSeconds: 15 * 60 } as const;

export type MfaStore = Pick<MfaRepository, keyof MfaRepository>;

/** What a code proved: the authenticator, or a recovery code (and how many are left). */
export type MfaProof = { with: 'authenticator' } | { with: 'recovery_code'; left: number };

export interface MfaSettings {
  /** The issuer an authenticator app shows beside the account (MFA_TOTP_ISSUER). */
  issuer: string;
}

const ON_ALREADY = 'MFA is on already; turn it off first (DELETE /api/v1/user/me/mfa) to enrol another authenticator';
const OFF = 'MFA is not on for this account';
const WRONG_CODE = { path: 'body.code', message: 'is not a current code of your authenticator, nor an unused recovery code' };

const sealedFor = (userId: string) => `mfa-totp:${userId}`;

export class Mfa {
  constructor(
    private readonly transact: Transact,
    private readonly users: Pick<Users, 'findLiveById'>,
    private readonly store: MfaStore,
    private readonly box: Pick<SecretBox, 'seal' | 'open'>,
    private readonly passwords: Pick<Passwords, 'verify'>,
    private readonly failures: FailureLimiter,
    private readonly outbox: AccountOutbox,
    private readonly clock: Clock,
    private readonly settings: MfaSettings,
  ) {}

  async status(userId: string) {
    const row = await this.store.find(userId);
    const enabled = row?.enabled_at != null;
    return {
      enabled,
      enabled_at: row?.enabled_at?.toISOString() ?? null,
      enrolment_pending: row !== undefined && !enabled,
      recovery_codes_left: enabled ? await this.store.countRecoveryCodesLeft(userId) : 0,
    };
  }

  /** Whether a login of this account needs a second factor. */
  async isEnabled(userId: string): Promise<boolean> {
    return (await this.store.find(userId))?.enabled_at != null;
  }

  /** A new secret, pending until confirmed; it replaces a pending one. */
  async enrol(userId: string) {
    const user = await this.liveUser(userId);
    const secret = newTotpSecret();
    const row = { user_id: user.id, secret_sealed: this.box.seal(secret, sealedFor(user.id)), created_at: this.clock.now() };
    if (!(await this.transact((tx) => this.store.putPending(row, tx)))) throw new AppError('conflict', ON_ALREADY);
    return { otpauth_uri: otpauthUri(secret, user.email, this.settings.issuer), secret, ...TOTP_PARAMS };
  }

  /** Turns MFA on with a code of the pending secret; answers the recovery codes, this once. */
  async confirm(userId: string, code: string) {
    const user = await this.liveUser(userId, { limited: true });
    const now = this.clock.now();
    const codes = await this.transact(async (tx) => {
      const row = await this.store.lock(user.id, tx);
      if (!row) throw new AppError('conflict', 'there is no enrolment to confirm; start one with POST /api/v1/user/me/mfa/enrol');
      if (row.enabled_at !== null) throw new AppError('conflict', ON_ALREADY);
      const step = stepOf(this.secretOf(row), code, now);
      if (step === undefined) return undefined;
      await this.store.enable(user.id, now, step, tx);
      const fresh = await this.replaceRecoveryCodes(tx, user.id, now);
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'mfa_enabled', data: { enabled_at: now.toISOString() } });
      return fresh;
    });
    if (!codes) throw await this.failed(user.id, { path: 'body.code', message: 'is not a current code of the enrolled secret' });
    this.outbox.kick();
    return { enabled: true as const, enabled_at: now.toISOString(), recovery_codes: codes };
  }

  /** Turns MFA off, given the account's password or a current code; secret and recovery codes go. */
  async remove(userId: string, proof: { password?: string | undefined; code?: string | undefined }): Promise<void> {
    const user = await this.liveUser(userId, { limited: true });
    // Before the transaction: the password's hash is slow work, not to be done holding a lock.
    const passwordOk = proof.password !== undefined && (await this.passwords.verify(user.password_hash, proof.password));
    const now = this.clock.now();
    const removed = await this.transact(async (tx) => {
      await this.enabledRow(tx, user.id);
      const by = proof.password !== undefined ? (passwordOk ? 'password' : undefined) : (await this.spend(tx, user.id, proof.code ?? '', now))?.with;
      if (!by) return false;
      await this.store.remove(user.id, tx);
      await this.store.removeRecoveryCodes(user.id, tx);
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'mfa_disabled', data: { disabled_at: now.toISOString(), with: by } });
      return true;
    });
    if (!removed) throw await this.failed(user.id, proof.password !== undefined ? { path: 'body.password', message: 'is not the password of this account' } : WRONG_CODE);
    this.outbox.kick();
  }

  /** Replaces every recovery code, given a current code; answers the new ones, this once. */
  async regenerateRecoveryCodes(userId: string, code: string): Promise<{ recovery_codes: string[] }> {
    const user = await this.liveUser(userId, { limited: true });
    const now = this.clock.now();
    const codes = await this.transact(async (tx) => {
      await this.enabledRow(tx, user.id);
      if (!(await this.spend(tx, user.id, code, now))) return undefined;
      const fresh = await this.replaceRecoveryCodes(tx, user.id, now);
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'mfa_recovery_codes_regenerated', data: { regenerated_at: now.toISOString() } });
      return fresh;
    });
    if (!codes) throw await this.failed(user.id, WRONG_CODE);
    this.outbox.kick();
    return { recovery_codes: codes };
  }

  /**
   * Whether `code` is a current authenticator code or an unused recovery code of the account
   * (MFA on), spending it in the caller's transaction: the step, or the recovery code, is not
   * accepted again once that transaction commits, and the person is mailed when a recovery
   * code was used (the outbox relays it after the commit). False for an account without MFA.
   * For any step that asks a person for proof (login's second step, deleting the account).
   */
  async checkCode(tx: AuthTx, user: { id: string; email: string }, code: string): Promise<boolean> {
    const now = this.clock.now();
    const proof = await this.spend(tx, user.id, code, now);
    if (proof?.with === 'recovery_code') {
      await this.outbox.mail(tx, { id: newId('systemMail'), to: user.email, template: 'mfa_recovery_code_used', data: { used_at: now.toISOString(), codes_left: proof.left } });
    }
    return proof !== undefined;
  }

  /** Spends the code if it is one of the account's, under the lock of its MFA row; undefined when it is not. */
  private async spend(tx: AuthTx, userId: string, code: string, now: Date): Promise<MfaProof | undefined> {
    const row = await this.store.lock(userId, tx);
    if (!row || row.enabled_at === null) return undefined;
    if (/^\d{6}$/.test(code)) {
      const step = stepOf(this.secretOf(row), code, now);
      if (step === undefined || !stepUnused(step, row.last_used_step)) return undefined;
      await this.store.spendStep(userId, step, tx);
      return { with: 'authenticator' };
    }
    if (!looksLikeRecoveryCode(code) || !(await this.store.useRecoveryCode(userId, recoveryCodeHash(userId, code), now, tx))) return undefined;
    return { with: 'recovery_code', left: await this.store.countRecoveryCodesLeft(userId, tx) };
  }

  private async replaceRecoveryCodes(tx: AuthTx, userId: string, now: Date): Promise<string[]> {
    const codes = newRecoveryCodes();
    await this.store.removeRecoveryCodes(userId, tx);
    await this.store.insertRecoveryCodes(userId, codes.map((c) => recoveryCodeHash(userId, c)), now, tx);
    return codes;
  }

  private async enabledRow(tx: AuthTx, userId: string): Promise<MfaTotpRow> {
    const row = await this.store.lock(userId, tx);
    if (!row || row.enabled_at === null) throw new AppError('conflict', OFF);
    return row;
  }

  private secretOf(row: MfaTotpRow): string {
    return this.box.open(row.secret_sealed, sealedFor(row.user_id)).toString('utf8');
  }

  /** The live account; with `limited`, refused while the person has failed too often. */
  private async liveUser(userId: string, opts: { limited?: boolean } = {}) {
    if (opts.limited) {
      const wait = await this.failures.wait(userId);
      if (wait !== undefined) {
        throw new AppError('rate_limited', `a wrong code or password was given ${MFA_FAILURES.count} times in ${MFA_FAILURES.windowSeconds / 60} minutes; try again in ${wait} s`, { retryAfterSeconds: wait });
      }
    }
    const user = await this.users.findLiveById(userId);
    if (!user) throw AppError.notFound('user');
    return user;
  }

  /** Counts a failure and makes its 403. */
  private async failed(userId: string, detail: { path: string; message: string }): Promise<AppError> {
    await this.failures.failed(userId);
    return new AppError('forbidden', `${detail.path.slice('body.'.length)} ${detail.message}`, { details: [detail] });
  }
}
