/**
 * The codes and link tokens of verification and password reset mails, and their rules:
 * - a mail carries a 6-digit code (uniform, node:crypto randomInt) and a link token (`mrv_` or
 *   `mrp_` + 32 random bytes); the code is stored as HMAC-SHA256 over the row id and the code,
 *   under a key derived from SECRETS_ENCRYPTION_KEY (a million codes are no work to try against
 *   a plain hash, so a stolen table must not be enough), the token as its SHA-256;
 * - a code expires 15 minutes after it was made; a link 24 hours (verification) or 30 minutes
 *   (reset) after; both end once either was used, or once a newer mail replaced them;
 * - a code takes 5 attempts, counted before the comparison and whatever the outcome, then
 *   is dead (the link still works) and no longer written to; comparisons are constant-time;
 * - a new code is made at most once a minute and 5 times an hour per person and purpose.
 */
import { createHmac, createSecretKey, randomInt, type KeyObject } from 'node:crypto';
import { AppError, newId } from '@mailroom/contracts';
import { constantTimeEqual, randomToken, sha256, type Clock } from '@mailroom/platform';
import type { CodePurpose, OneTimeCodeRepository, OneTimeCodeRow } from '../repo/one-time-code.repository';
import type { AuthTx } from '../repo/tables';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

export const CODE_POLICY = {
  email_verification: { codeTtlMs: 15 * MINUTE_MS, tokenTtlMs: 24 * HOUR_MS, tokenPrefix: 'mrv_', linkPath: '/verify-email' },
  password_reset: { codeTtlMs: 15 * MINUTE_MS, tokenTtlMs: 30 * MINUTE_MS, tokenPrefix: 'mrp_', linkPath: '/reset-password' },
  email_change: { codeTtlMs: 15 * MINUTE_MS, tokenTtlMs: 24 * HOUR_MS, tokenPrefix: 'mre_', linkPath: '/confirm-email-change' },
} as const satisfies Record<CodePurpose, { codeTtlMs: number; tokenTtlMs: number; tokenPrefix: string; linkPath: string }>;

/** Attempts at one code, the right one included. */
export const MAX_CODE_ATTEMPTS = 5;

/** How many new codes per person and purpose a window admits. */
export const ISSUE_LIMITS = [
  { count: 1, windowMs: MINUTE_MS },
  { count: 5, windowMs: HOUR_MS },
] as const;

const WRONG_CODE = 'the code is wrong, expired, used, or was tried 5 times already; ask for a new mail';

/**
 * Seconds until one more code may be made, given when the recent ones were made; undefined
 * when it may be made now. A window has room again once enough of its codes have left it.
 */
export function issueWait(madeAt: readonly Date[], now: Date): number | undefined {
  let waitMs = 0;
  for (const { count, windowMs } of ISSUE_LIMITS) {
    const inWindow = madeAt.map((t) => t.getTime()).filter((t) => now.getTime() - t < windowMs).sort((a, b) => a - b);
    if (inWindow.length < count) continue;
    const leaving = inWindow[inWindow.length - count]!;
    waitMs = Math.max(waitMs, leaving + windowMs - now.getTime());
  }
  return waitMs > 0 ? Math.ceil(waitMs / 1000) : undefined;
}

/** The keyed hash of codes and the plain hash of tokens. */
export class CodeHasher {
  private readonly key: KeyObject;

  /** `secretsKeyBase64`: SECRETS_ENCRYPTION_KEY; the code key is derived from it, for this use only. */
  constructor(secretsKeyBase64: string) {
    this.key = createSecretKey(createHmac('sha256', Buffer.from(secretsKeyBase64, 'base64')).update('mailroom auth one-time codes v1').digest());
  }

  /** Bound to its row: the same code in two rows hashes differently. */
  code(rowId: string, code: string): Buffer {
    return createHmac('sha256', this.key).update(`${rowId}:${code}`).digest();
  }

  token(token: string): Buffer {
    return sha256(token);
  }

  /** Constant-time; a row whose stored hash is malformed matches nothing. */
  codeMatches(rowId: string, code: string, stored: Buffer): boolean {
    return constantTimeEqual(this.code(rowId, code), stored);
  }
}

/** The row a guess at an unknown address is compared with, so that it costs what a real one does. */
const NO_ROW = { id: newId('oneTimeCode'), code_hash: Buffer.alloc(32) };

/** Whether a code attempt succeeds, given the row as it is once the attempt was counted. */
export function codeAccepted(row: Pick<OneTimeCodeRow, 'id' | 'code_hash' | 'attempts' | 'code_expires_at' | 'closed_at'>, code: string, now: Date, hasher: CodeHasher): boolean {
  const matches = hasher.codeMatches(row.id, code, row.code_hash);
  return matches && row.closed_at === null && row.attempts <= MAX_CODE_ATTEMPTS && now.getTime() < row.code_expires_at.getTime();
}

const UNKNOWN_LINK = 'this link is unknown, was used already, or a newer mail replaced it; ask for a new mail';

/** Why the link token of this row (undefined: no row has it) does not work now; undefined when it does. */
export function tokenRefusal(row: Pick<OneTimeCodeRow, 'token_expires_at' | 'closed_at'> | undefined, now: Date): AppError | undefined {
  if (!row || row.closed_at !== null) return new AppError('invalid_code', UNKNOWN_LINK);
  if (now.getTime() >= row.token_expires_at.getTime()) return new AppError('expired', `this link expired at ${row.token_expires_at.toISOString()}; ask for a new mail`);
  return undefined;
}

/** What the mail of a new code carries (the data of its template). */
export interface IssuedCode {
  code: string;
  code_expires_at: string;
  token: string;
  link: string;
  link_expires_at: string;
}

export type Codes = Pick<OneTimeCodeRepository, keyof OneTimeCodeRepository>;

export class OneTimeCodes {
  private readonly appUrl: string;

  constructor(
    private readonly codes: Codes,
    private readonly hasher: CodeHasher,
    /** APP_URL: links point at its pages. */
    appUrl: string,
    private readonly clock: Clock,
  ) {
    this.appUrl = appUrl.replace(/\/+$/, '');
  }

  /** Seconds until a new code may be made for the person and purpose; undefined: now. */
  async wait(userId: string, purpose: CodePurpose, tx?: AuthTx): Promise<number | undefined> {
    const now = this.clock.now();
    return issueWait(await this.codes.madeSince(userId, purpose, new Date(now.getTime() - HOUR_MS), tx), now);
  }

  /**
   * A new code and link for the person, replacing their open one, in the caller's transaction.
   * Undefined when another was made at the same moment (its mail is on its way).
   */
  async issue(tx: AuthTx, user: { id: string; email: string }, purpose: CodePurpose): Promise<IssuedCode | undefined> {
    const policy = CODE_POLICY[purpose];
    const now = this.clock.now();
    const id = newId('oneTimeCode');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const token = randomToken(policy.tokenPrefix);
    const codeExpires = new Date(now.getTime() + policy.codeTtlMs);
    const tokenExpires = new Date(now.getTime() + policy.tokenTtlMs);
    await this.codes.replaceOpen(user.id, purpose, now, tx);
    const made = await this.codes.insert(
      { id, user_id: user.id, purpose, email: user.email, code_hash: this.hasher.code(id, code), token_hash: this.hasher.token(token), created_at: now, code_expires_at: codeExpires, token_expires_at: tokenExpires },
      tx,
    );
    if (!made) return undefined;
    // In the fragment: a browser does not send it to the server, nor in a Referer.
    const link = `${this.appUrl}${policy.linkPath}#token=${token}`;
    return { code, code_expires_at: codeExpires.toISOString(), token, link, link_expires_at: tokenExpires.toISOString() };
  }

  /** The open code a link token names; invalid_code or expired otherwise. */
  async byToken(purpose: CodePurpose, token: string): Promise<OneTimeCodeRow> {
    const row = await this.codes.findByTokenHash(purpose, this.hasher.token(token));
    if (!row) throw new AppError('invalid_code', UNKNOWN_LINK);
    const refusal = tokenRefusal(row, this.clock.now());
    if (refusal) throw refusal;
    return row;
  }

  /**
   * The open code sent to `email`, if `code` is it: the attempt is counted first, in its own
   * statement. Every failure (no such account, no open code, wrong, expired, out of attempts)
   * is the same answer after the same comparison. In `tx` when given (the brute-force guard's,
   * so that the count commits with the guard's whether or not the email has a live code).
   */
  async byCode(purpose: CodePurpose, email: string, code: string, tx?: AuthTx): Promise<OneTimeCodeRow> {
    const now = this.clock.now();
    // Only a live code is counted (and written): past its attempts or its time it is as good as none.
    const row = await this.codes.countAttempt(purpose, email, { attemptsBelow: MAX_CODE_ATTEMPTS, now }, tx);
    if (!row) {
      this.hasher.codeMatches(NO_ROW.id, code, NO_ROW.code_hash);
      throw new AppError('invalid_code', WRONG_CODE);
    }
    if (!codeAccepted(row, code, now, this.hasher)) throw new AppError('invalid_code', WRONG_CODE);
    return row;
  }

  /** As byCode, for the open code of one account (signed in), whatever address it was sent to. */
  async byUserCode(purpose: CodePurpose, userId: string, code: string): Promise<OneTimeCodeRow> {
    const now = this.clock.now();
    const row = await this.codes.countAttemptOfUser(purpose, userId, { attemptsBelow: MAX_CODE_ATTEMPTS, now });
    if (!row) {
      this.hasher.codeMatches(NO_ROW.id, code, NO_ROW.code_hash);
      throw new AppError('invalid_code', WRONG_CODE);
    }
    if (!codeAccepted(row, code, now, this.hasher)) throw new AppError('invalid_code', WRONG_CODE);
    return row;
  }

  /** Uses the code in the caller's transaction: a second use, even at the same moment, is refused. */
  async use(tx: AuthTx, row: Pick<OneTimeCodeRow, 'id'>): Promise<void> {
    if (!(await this.codes.use(row.id, this.clock.now(), tx))) throw new AppError('invalid_code', 'this code or link was used already, or a newer mail replaced it; ask for a new mail');
  }
}
