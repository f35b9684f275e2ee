/**
 * In-memory stand-ins, for unit specs, of outside providers' attempts and linked identities
 * (with the repository's semantics: an attempt taken once; an identity linked once, and one
 * per provider and account), and of a provider that says whoever the spec tells it to.
 */
import type { AttemptChecks, OAuthProviderPort, ProviderIdentity } from '../src/domain/ports';
import type { OAuthAttemptRow, OAuthIdentityRow, OAuthRepository } from '../src/repo/oauth.repository';

export class MemoryOAuth implements Pick<OAuthRepository, Exclude<keyof OAuthRepository, 'lockAccount'>> {
  readonly attempts: OAuthAttemptRow[] = [];
  readonly identities: OAuthIdentityRow[] = [];

  async insertAttempt(row: Omit<OAuthAttemptRow, 'used_at'>): Promise<void> {
    this.attempts.push({ ...row, used_at: null });
  }
  async takeAttempt(stateHash: Buffer, now: Date) {
    const row = this.attempts.find((a) => a.state_hash.equals(stateHash) && a.used_at === null);
    if (row) row.used_at = now;
    return row && { ...row };
  }
  async deleteAttemptsExpiredBefore(before: Date): Promise<void> {
    this.attempts.splice(0, this.attempts.length, ...this.attempts.filter((a) => a.expires_at >= before));
  }
  async findIdentity(provider: string, subject: string) {
    const row = this.identities.find((i) => i.provider === provider && i.subject === subject);
    return row && { ...row };
  }
  async listIdentities(userId: string) {
    return this.identities.filter((i) => i.user_id === userId).map((i) => ({ ...i }));
  }
  async insertIdentity(row: OAuthIdentityRow): Promise<boolean> {
    if (this.identities.some((i) => i.provider === row.provider && (i.subject === row.subject || i.user_id === row.user_id))) return false;
    this.identities.push({ ...row });
    return true;
  }
  async touchIdentity(provider: string, subject: string, use: { email: string | null; now: Date }): Promise<void> {
    const row = this.identities.find((i) => i.provider === provider && i.subject === subject);
    if (row) Object.assign(row, { email: use.email, last_used_at: use.now });
  }
  async deleteIdentity(userId: string, provider: string): Promise<boolean> {
    const at = this.identities.findIndex((i) => i.user_id === userId && i.provider === provider);
    if (at >= 0) this.identities.splice(at, 1);
    return at >= 0;
  }
  async deleteIdentitiesOf(userId: string): Promise<void> {
    this.identities.splice(0, this.identities.length, ...this.identities.filter((i) => i.user_id !== userId));
  }
}

/** A provider that vouches for `next` (set by the spec), and records the checks it was given. */
export class FakeProvider implements OAuthProviderPort {
  next: ProviderIdentity = { subject: 'sub-1', email: 'ada@example.com', emailVerified: true, name: 'Ada' };
  readonly seen: { callback: { code: string; state: string }; checks: AttemptChecks }[] = [];

  async authorizationUrl(checks: AttemptChecks): Promise<string> {
    return `https://id.example.com/authorize?state=${checks.state}&nonce=${checks.nonce}`;
  }
  async identify(callback: { code: string; state: string }, checks: AttemptChecks): Promise<ProviderIdentity> {
    this.seen.push({ callback, checks });
    return { ...this.next };
  }
}
