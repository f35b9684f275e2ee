/**
 * The brute-force guard: per account identifier (the lower-cased email as given, whether an
 * account has it or not) and kind of secret (a password at login, the code of a reset or a
 * verification mail, a second factor), failed attempts are counted in the database, so every
 * auth instance sees the same count whatever address the attempts come from; past the limit
 * (attempt-limits.ts) the identifier is locked and every attempt is refused with 429 and
 * Retry-After, the right one too. The identifier is stored only as a keyed hash, and an unknown
 * address is counted, locked and answered exactly as a known one, with the same work.
 *
 *   const user = await guard.attempt('login', email, () => checkPassword());   // throws 429 while locked
 *
 * (`attemptWithin` when the work writes and must commit with the count: mailed codes);
 * or, where the work cannot be wrapped: `const a = await guard.admit(kind, id)`, then
 * `guard.failed(a)` or `await guard.succeeded(a)`.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { AppError } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { AttemptKey, AttemptKind, AttemptRepository, AttemptRow } from '../repo/attempt.repository';
import type { AuthTx } from '../repo/tables';
import { admit, freshState, type AttemptPolicy, type AttemptState } from './attempt-limits';
import type { Transact } from './ports';

export type { AttemptKind } from '../repo/attempt.repository';

/** The keyed hash of identifiers: the table does not list the addresses that were tried. */
export class IdentifierHasher {
  private readonly key: KeyObject;

  /** `secretsKeyBase64`: SECRETS_ENCRYPTION_KEY; the key is derived from it, for this use only. */
  constructor(secretsKeyBase64: string) {
    this.key = createSecretKey(createHmac('sha256', Buffer.from(secretsKeyBase64, 'base64')).update('mailroom auth attempt identifiers v1').digest());
  }

  hash(identifier: string): Buffer {
    return createHmac('sha256', this.key).update(normalized(identifier)).digest();
  }
}

const normalized = (identifier: string) => identifier.trim().toLowerCase();

/** An identifier was locked by a failed attempt: what the notice says (lockout-notices.ts). */
export interface Lockout {
  kind: AttemptKind;
  /** The lower-cased identifier (an email). */
  identifier: string;
  failures: number;
  lockedAt: Date;
  lockedUntil: Date;
}

/** Told of each lock once, at the attempt that started it; returns at once (the work follows the answer). */
export interface LockoutListener {
  lockedOut(lockout: Lockout): void;
}

/** An admitted attempt: counted already; its outcome is told with `failed` or `succeeded`. */
export interface Attempt {
  readonly key: AttemptKey;
  readonly identifier: string;
  /** The lock this attempt started (it was the last one the limit admits), if any. */
  readonly lock: { at: Date; until: Date } | undefined;
}

export type Attempts = Pick<AttemptRepository, keyof AttemptRepository>;

const REFUSALS: Record<AttemptKind, (seconds: number) => string> = {
  login: (s) => `too many failed sign-ins for this email; sign-in is refused for ${s} s, even with the right password. Resetting the password (POST /api/v1/auth/password/reset-request) lifts the lock`,
  password_reset: (s) => `too many wrong codes for this email; codes are refused for ${s} s. The link of the reset mail still works`,
  email_verification: (s) => `too many wrong codes for this email; codes are refused for ${s} s. The link of the verification mail still works`,
  mfa: (s) => `too many wrong second-factor codes for this account; they are refused for ${s} s`,
};

export class AttemptGuard {
  constructor(
    private readonly transact: Transact,
    private readonly attempts: Attempts,
    private readonly hasher: IdentifierHasher,
    private readonly clock: Clock,
    private readonly policy: AttemptPolicy,
    private readonly listener: LockoutListener,
  ) {}

  /** Runs `work` as one attempt: refused with 429 while locked; a throw is a failure (rethrown), a result a success. */
  async attempt<T>(kind: AttemptKind, identifier: string, work: () => Promise<T>): Promise<T> {
    const attempt = await this.admit(kind, identifier);
    let result: T;
    try {
      result = await work();
    } catch (err) {
      this.failed(attempt);
      throw err;
    }
    await this.succeeded(attempt);
    return result;
  }

  /**
   * As `attempt`, with `work` in the transaction that counts the attempt, for work that writes
   * (a mailed code's own count): one commit whether or not the email has an account, so the
   * timing does not tell. `work` must be brief (the identifier's row is locked meanwhile); its
   * failure does not undo the count.
   */
  async attemptWithin<T>(kind: AttemptKind, identifier: string, work: (tx: AuthTx) => Promise<T>): Promise<T> {
    const { attempt, outcome } = await this.transact(async (tx) => {
      const admitted = await this.admitIn(tx, kind, identifier);
      const settled = await work(tx).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
      return { attempt: admitted, outcome: settled };
    });
    if (!outcome.ok) {
      this.failed(attempt);
      throw outcome.error;
    }
    await this.succeeded(attempt);
    return outcome.value;
  }

  /** Counts one attempt, before its secret is compared; 429 rate_limited with Retry-After while the identifier is locked. */
  admit(kind: AttemptKind, identifier: string): Promise<Attempt> {
    return this.transact((tx) => this.admitIn(tx, kind, identifier));
  }

  private async admitIn(tx: AuthTx, kind: AttemptKind, identifier: string): Promise<Attempt> {
    const key: AttemptKey = { kind, identifier_hash: this.hasher.hash(identifier) };
    const now = this.clock.now();
    await this.attempts.ensure(toRow(key, freshState(now)), tx);
    const row = await this.attempts.lock(key, tx);
    const admission = admit(row ? toState(row) : freshState(now), now, this.policy);
    if (!admission.admitted) throw new AppError('rate_limited', REFUSALS[kind](admission.retryAfterSeconds), { retryAfterSeconds: admission.retryAfterSeconds });
    await this.attempts.save(toRow(key, admission.next), tx);
    return { key, identifier: normalized(identifier), lock: admission.locking && admission.lockedUntil ? { at: now, until: admission.lockedUntil } : undefined };
  }

  /** The secret was wrong. Nothing more to count; the lock this attempt started is told once. */
  failed(attempt: Attempt): void {
    if (!attempt.lock) return;
    this.listener.lockedOut({ kind: attempt.key.kind, identifier: attempt.identifier, failures: this.policy.failures, lockedAt: attempt.lock.at, lockedUntil: attempt.lock.until });
  }

  /** The secret was right: its count and locks are forgotten (the lock this attempt started too). */
  async succeeded(attempt: Attempt): Promise<void> {
    await this.attempts.remove(attempt.key);
  }

  /** Forgets the count and locks of `kind` for the identifier: its owner proved who they are another way (a password reset). */
  async forget(kind: AttemptKind, identifier: string): Promise<void> {
    await this.attempts.remove({ kind, identifier_hash: this.hasher.hash(identifier) });
  }

  /** Deletes what is forgotten by now (a periodic sweep); how many rows. */
  prune(): Promise<number> {
    return this.attempts.removeForgotten(this.clock.now());
  }
}

function toState(row: AttemptRow): AttemptState {
  return { failures: row.failures, locks: row.locks, lastFailureAt: row.last_failure_at, lockedUntil: row.locked_until, forgetAt: row.forget_at };
}

function toRow(key: AttemptKey, s: AttemptState): AttemptRow {
  return { ...key, failures: s.failures, locks: s.locks, last_failure_at: s.lastFailureAt, locked_until: s.lockedUntil, forget_at: s.forgetAt };
}
