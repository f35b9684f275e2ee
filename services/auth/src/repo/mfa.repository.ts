/** A person's TOTP secret and recovery codes (mfa_totp, mfa_recovery_codes). */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { AuthDb, MfaTotpTable } from './tables';

export type MfaTotpRow = Selectable<MfaTotpTable>;

export class MfaRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  find(userId: string, ex: Executor<AuthDb> = this.db): Promise<MfaTotpRow | undefined> {
    return ex.selectFrom('mfa_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** The row locked until the transaction ends: checks of a code by the same person wait for each other. */
  lock(userId: string, ex: Executor<AuthDb>): Promise<MfaTotpRow | undefined> {
    return ex.selectFrom('mfa_totp').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst();
  }

  /** A new pending secret, replacing a pending one; false when MFA is on (an enabled row is left alone). */
  async putPending(row: { user_id: string; secret_sealed: Buffer; created_at: Date }, ex: Executor<AuthDb>): Promise<boolean> {
    const put = await ex
      .insertInto('mfa_totp')
      .values({ ...row, enabled_at: null, last_used_step: null })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_sealed: row.secret_sealed, created_at: row.created_at, last_used_step: null }).where('mfa_totp.enabled_at', 'is', null))
      .returning('user_id')
      .executeTakeFirst();
    return put !== undefined;
  }

  /** Turns the pending secret on, its confirming step spent. */
  async enable(userId: string, now: Date, step: number, ex: Executor<AuthDb>): Promise<void> {
    await ex.updateTable('mfa_totp').set({ enabled_at: now, last_used_step: step }).where('user_id', '=', userId).execute();
  }

  /** Records the time step a code was accepted for (the caller holds the row's lock). */
  async spendStep(userId: string, step: number, ex: Executor<AuthDb>): Promise<void> {
    await ex.updateTable('mfa_totp').set({ last_used_step: step }).where('user_id', '=', userId).execute();
  }

  async remove(userId: string, ex: Executor<AuthDb>): Promise<void> {
    await ex.deleteFrom('mfa_totp').where('user_id', '=', userId).execute();
  }

  async removeRecoveryCodes(userId: string, ex: Executor<AuthDb>): Promise<void> {
    await ex.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  }

  async insertRecoveryCodes(userId: string, hashes: readonly Buffer[], now: Date, ex: Executor<AuthDb>): Promise<void> {
    await ex
      .insertInto('mfa_recovery_codes')
      .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, created_at: now, used_at: null })))
      .execute();
  }

  /** Marks the unused code of this hash used; false when the person has no such unused code. */
  async useRecoveryCode(userId: string, hash: Buffer, now: Date, ex: Executor<AuthDb>): Promise<boolean> {
    const res = await ex
      .updateTable('mfa_recovery_codes')
      .set({ used_at: now })
      .where('user_id', '=', userId)
      .where('code_hash', '=', hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async countRecoveryCodesLeft(userId: string, ex: Executor<AuthDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('mfa_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
