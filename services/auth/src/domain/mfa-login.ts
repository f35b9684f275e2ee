/**
 * A login in two steps, when the account has MFA on. The right password earns no session but
 * an mfa_token (`mrm_` + 32 random bytes, stored as its SHA-256, bound to the account): it
 * lives 5 minutes and takes 5 attempts at a code (each counted before the code is checked,
 * the right one included), then is dead. `verifyLogin` with it and a current authenticator
 * code (or a recovery code) opens the session as login does, in the transaction that spends
 * the code and the token: of two attempts at once, one wins.
 *
 * A wrong code is 401 invalid_credentials; a token that is unknown, expired, used or out of
 * attempts is 401 unauthorized (log in again). The code is checked only against the token's
 * account: another person's code, or token, proves nothing here. Across tokens, wrong codes
 * count in the brute-force guard under the account's email (kind `mfa`): 10 lock it, even for
 * the right code (429 with Retry-After).
 */
import { AppError, MFA_TOKEN_TTL_SECONDS, type MfaChallenge, type SessionResponse } from '@mailroom/contracts';
import { randomToken, sha256, type Clock } from '@mailroom/platform';
import type { MfaChallengeRepository } from '../repo/mfa-challenge.repository';
import type { UserRow } from '../repo/user.repository';
import type { AuthTx } from '../repo/tables';
import { signInAccount } from './account-deletion';
import type { AttemptGuard } from './attempt-guard';
import type { Mfa } from './mfa';
import type { ClientInfo, DeletedAccounts, Transact } from './ports';
import type { SessionStart } from './session-start';

export const MFA_TOKEN_PREFIX = 'mrm_';
/** Attempts at a code per mfa_token, the right one included. */
export const MFA_TOKEN_ATTEMPTS = 5;

const DEAD_TOKEN = 'this mfa_token is unknown, expired, used, or out of attempts; log in again';

export type MfaChallenges = Pick<MfaChallengeRepository, keyof MfaChallengeRepository>;

export class MfaLogin {
  constructor(
    private readonly challenges: MfaChallenges,
    /** The account of a token in any state: a deleted one within its window proves the second factor for its recovery token. */
    private readonly accounts: Pick<DeletedAccounts, 'findById'>,
    private readonly mfa: Pick<Mfa, 'isEnabled' | 'checkCode'>,
    private readonly start: Pick<SessionStart, 'signIn'>,
    private readonly clock: Clock,
    /** Wrong codes per account, across its tokens: past the limit even the right code waits (attempt-guard.ts). */
    private readonly guard: Pick<AttemptGuard, 'attempt'>,
    private readonly transact: Transact,
    private readonly deleted: { refuseSignIn(user: UserRow): Promise<AppError> },
  ) {}

  /** Whether a login of this account needs its second step. */
  required(userId: string): Promise<boolean> {
    return this.mfa.isEnabled(userId);
  }

  /** The first step's answer, once the password was right: a token for the second. */
  async challenge(user: Pick<UserRow, 'id'>): Promise<MfaChallenge> {
    const token = randomToken(MFA_TOKEN_PREFIX);
    const now = this.clock.now();
    // The person's dead tokens are of no more use: they go as new ones are made.
    await this.challenges.deleteEnded(user.id, now);
    await this.challenges.insert({ token_hash: sha256(token), user_id: user.id, created_at: now, expires_at: new Date(now.getTime() + MFA_TOKEN_TTL_SECONDS * 1000) });
    return { mfa_required: true, mfa_token: token, expires_in: MFA_TOKEN_TTL_SECONDS };
  }

  /** The second step: the token and a code of its account open a session, answered as login answers one. */
  async verifyLogin(req: { mfa_token: string; code: string }, client: ClientInfo): Promise<SessionResponse> {
    const hash = sha256(req.mfa_token);
    const now = this.clock.now();
    const challenge = await this.challenges.countAttempt(hash, { attemptsBelow: MFA_TOKEN_ATTEMPTS, now });
    if (!challenge) throw new AppError('unauthorized', DEAD_TOKEN);
    // Live, or deleted within its recovery window: one past it is as unknown.
    const user = signInAccount(await this.accounts.findById(challenge.user_id), now);
    if (!user) throw new AppError('unauthorized', DEAD_TOKEN);
    const proof = async (tx: AuthTx) => {
      if (!(await this.mfa.checkCode(tx, user, req.code))) {
        const left = MFA_TOKEN_ATTEMPTS - challenge.attempts;
        throw new AppError('invalid_credentials', `the code is not a current code of your authenticator, nor an unused recovery code; ${left === 0 ? 'this mfa_token is spent: log in again' : `${left} more ${left === 1 ? 'attempt' : 'attempts'} with this mfa_token`}`);
      }
      if (!(await this.challenges.use(hash, now, tx))) throw new AppError('unauthorized', DEAD_TOKEN);
    };
    const session = await this.guard.attempt('mfa', user.email, async () => {
      if (user.deleted_at === null) return this.start.signIn(user, client, 'password_and_mfa', proof);
      await this.transact(proof);
      return undefined;
    });
    if (session) return session;
    // Both factors proven: a deleted account gets its recovery token, never a session (account-recovery.ts).
    throw await this.deleted.refuseSignIn(user);
  }
}
