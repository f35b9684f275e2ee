/**
 * In-memory stand-ins, for unit specs of email change, deletion, recovery and the purge:
 * MemoryCredentials' users, sessions and codes, plus what those need (with the repositories'
 * semantics): accounts in any state (one per address until purged), sessions with their
 * sign-in time, recovery tokens used once, API keys by creator, and a purge that takes the
 * account's sessions, codes and tokens with it.
 */
import type { ApiKeyRepository } from '../src/repo/api-key.repository';
import type { DeletedAccountRepository, RecoveryTokenRow } from '../src/repo/deleted-account.repository';
import type { SessionRow, UserRow } from '../src/repo/user.repository';
import { MemoryCredentials } from './memory-credentials';

export class MemoryAccounts extends MemoryCredentials implements Pick<DeletedAccountRepository, keyof DeletedAccountRepository>, Pick<ApiKeyRepository, 'liveCreatedBy' | 'revokeCreatedBy'> {
  /** When each session's sign-in was (the row's authenticated_at). */
  readonly signedInAt = new Map<string, Date>();
  readonly recoveryTokens: RecoveryTokenRow[] = [];
  readonly keys: { id: string; org_id: string; created_by: string; revoked_at: Date | null }[] = [];

  override addSession(id: string, userId: string, signedInAt = new Date('2026-01-01T00:00:00.000Z')): void {
    super.addSession(id, userId);
    this.signedInAt.set(id, signedInAt);
  }

  async findSessionOfUser(userId: string, id: string): Promise<SessionRow | undefined> {
    const s = this.sessions.get(id);
    const at = this.signedInAt.get(id);
    if (!s || s.user_id !== userId || !at) return undefined;
    return { ...s, org_id: 'org_01', created_at: at, last_refreshed_at: at, expires_at: new Date(at.getTime() + 86_400_000), ip: null, user_agent: null, authenticated_at: at, method: 'password' };
  }

  // accounts in any state
  async findByEmail(email: string) {
    return [...this.users.values()].find((u) => u.email === email);
  }
  async markDeleted(id: string, now: Date) {
    const u = this.users.get(id);
    if (!u || u.deleted_at !== null) return false;
    Object.assign(u, { deleted_at: now, updated_at: now });
    return true;
  }
  async restore(id: string, deletedAfter: Date, now: Date): Promise<UserRow | undefined> {
    const u = this.users.get(id);
    if (!u || u.deleted_at === null || u.deleted_at <= deletedAfter) return undefined;
    Object.assign(u, { deleted_at: null, updated_at: now });
    return { ...u };
  }
  async insertRecoveryToken(row: Omit<RecoveryTokenRow, 'used_at'>) {
    this.recoveryTokens.push({ ...row, used_at: null });
  }
  async findRecoveryToken(hash: Buffer) {
    const row = this.recoveryTokens.find((t) => t.token_hash.equals(hash));
    return row && { ...row };
  }
  async useRecoveryToken(hash: Buffer, now: Date) {
    const row = this.recoveryTokens.find((t) => t.token_hash.equals(hash) && t.used_at === null);
    if (row) row.used_at = now;
    return row !== undefined;
  }
  async deletedBy(deletedBy: Date, opts: { limit: number; after?: string | undefined }) {
    return [...this.users.values()]
      .filter((u) => u.deleted_at !== null && u.deleted_at <= deletedBy && (!opts.after || u.id > opts.after))
      .map((u) => u.id)
      .sort()
      .slice(0, opts.limit);
  }
  async purge(id: string, deletedBy: Date) {
    const u = this.users.get(id);
    if (!u || u.deleted_at === null || u.deleted_at > deletedBy) return false;
    this.users.delete(id);
    for (const [sid, s] of this.sessions) if (s.user_id === id) this.sessions.delete(sid);
    this.codes.splice(0, this.codes.length, ...this.codes.filter((c) => c.user_id !== id));
    this.recoveryTokens.splice(0, this.recoveryTokens.length, ...this.recoveryTokens.filter((t) => t.user_id !== id));
    return true;
  }

  // API keys by creator
  async liveCreatedBy(userId: string) {
    return this.keys.filter((k) => k.created_by === userId && k.revoked_at === null).map(({ id, org_id }) => ({ id, org_id }));
  }
  async revokeCreatedBy(userId: string, now: Date) {
    const live = this.keys.filter((k) => k.created_by === userId && k.revoked_at === null);
    for (const k of live) k.revoked_at = now;
    return live.map(({ id, org_id }) => ({ id, org_id }));
  }
}
