/**
 * In-memory stand-ins, for unit specs, of what verification and password changes use: the
 * users, sessions and one-time codes (with the repositories' semantics: one open code per
 * person and purpose, an attempt counted only on a live code (open, unexpired, attempts
 * left) of a live account of that address, a code used once) and the outbox (mails and
 * revocation facts as written).
 */
import type { AccountMail, AuditEntry, Fact } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { FailureLimiter } from '../src/domain/password-change';
import type { AccountOutbox, Transact } from '../src/domain/ports';
import type { CodePurpose, OneTimeCodeRepository, OneTimeCodeRow } from '../src/repo/one-time-code.repository';
import type { CredentialRepository } from '../src/repo/credential.repository';
import type { AuthTx } from '../src/repo/tables';
import type { SessionRow, UserRepository, UserRow } from '../src/repo/user.repository';

export class MemoryCredentials
  implements Pick<OneTimeCodeRepository, keyof OneTimeCodeRepository>, Pick<CredentialRepository, keyof CredentialRepository>, Pick<UserRepository, 'findLiveById' | 'findLiveByEmail' | 'updatePasswordHash'>
{
  readonly users = new Map<string, UserRow>();
  readonly sessions = new Map<string, Pick<SessionRow, 'id' | 'user_id' | 'revoked_at' | 'revoked_reason'>>();
  readonly codes: OneTimeCodeRow[] = [];

  addUser(id: string, email: string, passwordHash = 'hash:old password'): UserRow {
    const at = new Date('2026-01-01T00:00:00.000Z');
    const row: UserRow = { id, email, password_hash: passwordHash, name: null, email_verified_at: null, created_at: at, updated_at: at, deleted_at: null };
    this.users.set(id, row);
    return row;
  }

  addSession(id: string, userId: string): void {
    this.sessions.set(id, { id, user_id: userId, revoked_at: null, revoked_reason: null });
  }

  // users
  /** In any state (DeletedAccountRepository.findById). */
  async findById(id: string) {
    return this.users.get(id);
  }
  async findLiveById(id: string) {
    const u = this.users.get(id);
    return u && u.deleted_at === null ? u : undefined;
  }
  async findLiveByEmail(email: string) {
    return [...this.users.values()].find((u) => u.email === email && u.deleted_at === null);
  }
  async updatePasswordHash(id: string, hash: string, now: Date): Promise<void> {
    const u = this.users.get(id);
    if (u) Object.assign(u, { password_hash: hash, updated_at: now });
  }

  // credentials
  async markEmailVerified(userId: string, now: Date): Promise<void> {
    const u = this.users.get(userId);
    if (u && u.email_verified_at === null) Object.assign(u, { email_verified_at: now, updated_at: now });
  }
  async removePassword(userId: string, now: Date): Promise<void> {
    const u = this.users.get(userId);
    if (u) Object.assign(u, { password_hash: null, updated_at: now });
  }
  async revokeSessionsOf(userId: string, opts: { reason: string; now: Date; except?: string | undefined }): Promise<string[]> {
    const ended = [...this.sessions.values()].filter((s) => s.user_id === userId && s.revoked_at === null && s.id !== opts.except);
    for (const s of ended) Object.assign(s, { revoked_at: opts.now, revoked_reason: opts.reason });
    return ended.map((s) => s.id);
  }

  async changeEmail(userId: string, email: string, now: Date) {
    const u = this.users.get(userId);
    if (!u || u.deleted_at !== null || [...this.users.values()].some((o) => o.email === email && o.id !== userId)) return undefined;
    Object.assign(u, { email, email_verified_at: now, updated_at: now });
    return { ...u };
  }

  // one-time codes
  async insert(row: Omit<OneTimeCodeRow, 'attempts' | 'closed_at' | 'closed_reason'>): Promise<boolean> {
    if (this.open(row.user_id, row.purpose)) return false;
    this.codes.push({ ...row, attempts: 0, closed_at: null, closed_reason: null });
    return true;
  }
  async replaceOpen(userId: string, purpose: CodePurpose, now: Date): Promise<void> {
    const open = this.open(userId, purpose);
    if (open) Object.assign(open, { closed_at: now, closed_reason: 'replaced' });
  }
  async madeSince(userId: string, purpose: CodePurpose, since: Date): Promise<Date[]> {
    return this.codes.filter((c) => c.user_id === userId && c.purpose === purpose && c.created_at > since).map((c) => c.created_at);
  }
  async findByTokenHash(purpose: CodePurpose, tokenHash: Buffer) {
    const row = this.codes.find((c) => c.purpose === purpose && c.token_hash.equals(tokenHash));
    return row && { ...row };
  }
  async countAttempt(purpose: CodePurpose, email: string, live: { attemptsBelow: number; now: Date }) {
    const user = await this.findLiveByEmail(email);
    const row =
      user &&
      this.codes.find((c) => c.user_id === user.id && c.purpose === purpose && c.email === email && c.closed_at === null && c.attempts < live.attemptsBelow && c.code_expires_at > live.now);
    if (!row) return undefined;
    row.attempts += 1;
    return { ...row };
  }
  async countAttemptOfUser(purpose: CodePurpose, userId: string, live: { attemptsBelow: number; now: Date }) {
    const row = this.codes.find((c) => c.user_id === userId && c.purpose === purpose && c.closed_at === null && c.attempts < live.attemptsBelow && c.code_expires_at > live.now);
    if (!row) return undefined;
    row.attempts += 1;
    return { ...row };
  }
  async use(id: string, now: Date): Promise<boolean> {
    const row = this.codes.find((c) => c.id === id && c.closed_at === null);
    if (row) Object.assign(row, { closed_at: now, closed_reason: 'used' });
    return row !== undefined;
  }

  private open(userId: string, purpose: CodePurpose): OneTimeCodeRow | undefined {
    return this.codes.find((c) => c.user_id === userId && c.purpose === purpose && c.closed_at === null);
  }
}

/** The outbox as written: what was committed is what the stand-in store holds (no rollback here). */
export class MemoryOutbox implements AccountOutbox {
  readonly mails: AccountMail[] = [];
  readonly facts: Fact<'internal.auth.session.revoked'>[] = [];
  readonly audited: AuditEntry[] = [];
  kicks = 0;
  async mail(_tx: AuthTx, mail: AccountMail): Promise<void> {
    this.mails.push(mail);
  }
  async sessionRevoked(_tx: AuthTx, fact: Fact<'internal.auth.session.revoked'>): Promise<void> {
    this.facts.push(fact);
  }
  async audit(_tx: AuthTx, entry: AuditEntry): Promise<void> {
    this.audited.push(entry);
  }
  kick(): void {
    this.kicks++;
  }
  /** The last mail of a template. */
  last<T extends AccountMail['template']>(template: T): Extract<AccountMail, { template: T }> {
    const found = this.mails.filter((m): m is Extract<AccountMail, { template: T }> => m.template === template).at(-1);
    if (!found) throw new Error(`no ${template} mail`);
    return found;
  }
}

/** The stand-in store ignores the transaction it is handed; rollback is the database's (integration tests). */
const NO_TX: AuthTx = Object.create(null);
export const memoryTransact: Transact = (work) => work(NO_TX);

export const clockAt = (iso = '2026-11-27T10:00:00.000Z') => new ManualClock(new Date(iso));

/** A FailureLimiter's contract on the test's clock: `count` failures within the window, then a wait until the first of them leaves it. */
export function memoryLimiter(clock: { now(): Date }, limit: { count: number; windowSeconds: number }): FailureLimiter {
  const failures = new Map<string, number[]>();
  const recent = (key: string) => (failures.get(key) ?? []).filter((t) => clock.now().getTime() - t < limit.windowSeconds * 1000);
  return {
    wait: async (key) => {
      const r = recent(key);
      return r.length >= limit.count ? Math.ceil((r[0]! + limit.windowSeconds * 1000 - clock.now().getTime()) / 1000) : undefined;
    },
    failed: async (key) => void failures.set(key, [...recent(key), clock.now().getTime()]),
  };
}
