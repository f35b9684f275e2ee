/**
 * In-memory stand-ins, for unit specs, of the MFA repositories, with their semantics: one
 * TOTP row per person, a pending one replaced but an enabled one left alone; a recovery code
 * used once; a challenge's attempt counted only while it is unused, unexpired and has
 * attempts left; a challenge used once.
 */
import type { MfaChallengeRow } from '../src/repo/mfa-challenge.repository';
import type { MfaTotpRow } from '../src/repo/mfa.repository';
import type { MfaStore } from '../src/domain/mfa';
import type { MfaChallenges } from '../src/domain/mfa-login';

export class MemoryMfa implements MfaStore {
  readonly totp = new Map<string, MfaTotpRow>();
  readonly recovery: { user_id: string; code_hash: Buffer; created_at: Date; used_at: Date | null }[] = [];
  /** How often a row was locked (a code is checked under the row's lock). */
  locks = 0;

  async find(userId: string) {
    const row = this.totp.get(userId);
    return row && { ...row };
  }
  async lock(userId: string) {
    this.locks++;
    return this.find(userId);
  }
  async putPending(row: { user_id: string; secret_sealed: Buffer; created_at: Date }): Promise<boolean> {
    if (this.totp.get(row.user_id)?.enabled_at) return false;
    this.totp.set(row.user_id, { ...row, enabled_at: null, last_used_step: null });
    return true;
  }
  async enable(userId: string, now: Date, step: number): Promise<void> {
    Object.assign(this.totp.get(userId)!, { enabled_at: now, last_used_step: step });
  }
  async spendStep(userId: string, step: number): Promise<void> {
    this.totp.get(userId)!.last_used_step = step;
  }
  async remove(userId: string): Promise<void> {
    this.totp.delete(userId);
  }
  async removeRecoveryCodes(userId: string): Promise<void> {
    for (let i = this.recovery.length - 1; i >= 0; i--) if (this.recovery[i]!.user_id === userId) this.recovery.splice(i, 1);
  }
  async insertRecoveryCodes(userId: string, hashes: readonly Buffer[], now: Date): Promise<void> {
    for (const code_hash of hashes) this.recovery.push({ user_id: userId, code_hash, created_at: now, used_at: null });
  }
  async useRecoveryCode(userId: string, hash: Buffer, now: Date): Promise<boolean> {
    const row = this.recovery.find((r) => r.user_id === userId && r.code_hash.equals(hash) && r.used_at === null);
    if (row) row.used_at = now;
    return row !== undefined;
  }
  async countRecoveryCodesLeft(userId: string): Promise<number> {
    return this.recovery.filter((r) => r.user_id === userId && r.used_at === null).length;
  }
}

export class MemoryChallenges implements MfaChallenges {
  readonly rows: MfaChallengeRow[] = [];

  async insert(row: Omit<MfaChallengeRow, 'attempts' | 'used_at'>): Promise<void> {
    this.rows.push({ ...row, attempts: 0, used_at: null });
  }
  async deleteEnded(userId: string, before: Date): Promise<void> {
    for (let i = this.rows.length - 1; i >= 0; i--) if (this.rows[i]!.user_id === userId && this.rows[i]!.expires_at <= before) this.rows.splice(i, 1);
  }
  async countAttempt(tokenHash: Buffer, live: { attemptsBelow: number; now: Date }) {
    const row = this.rows.find((r) => r.token_hash.equals(tokenHash) && r.used_at === null && r.attempts < live.attemptsBelow && r.expires_at > live.now);
    if (!row) return undefined;
    row.attempts += 1;
    return { ...row };
  }
  async use(tokenHash: Buffer, now: Date): Promise<boolean> {
    const row = this.rows.find((r) => r.token_hash.equals(tokenHash) && r.used_at === null);
    if (row) row.used_at = now;
    return row !== undefined;
  }
}
