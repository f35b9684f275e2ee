/**
 * The rule of the brute-force guard, as plain functions of a state and the time: failed
 * attempts at one secret of one account identifier (an email, known or not: the rule does not
 * know which) are counted; the attempt that makes `failures` of them locks the identifier for
 * `lockMs`, each next lock twice as long as the one before, at most `maxLockMs`; while locked,
 * every attempt is refused, the right one too. Failures are remembered until `memoryMs` passes
 * without one (and without a lock): the long memory is what bounds a patient guesser, who
 * cannot wait a short window out. A success forgets everything (attempt-guard.ts).
 *
 * An attempt is counted when it is admitted, before its secret is compared, so concurrent
 * guesses each count and none can slip in before the lock.
 */

/** What the guard keeps per kind and identifier (a row of attempt_guards). */
export interface AttemptState {
  /** Admitted attempts since the last lock (or since the state was fresh). */
  failures: number;
  /** Locks so far: the next lasts twice as long as the last. */
  locks: number;
  lastFailureAt: Date | null;
  lockedUntil: Date | null;
  /** When the state holds nothing worth keeping any more (the row may be deleted). */
  forgetAt: Date;
}

export interface AttemptPolicy {
  /** Failed attempts that lock. */
  failures: number;
  /** The first lock; each next one is twice as long. */
  lockMs: number;
  maxLockMs: number;
  /** Failures and locks are forgotten once this long passed since the last failure and the end of the last lock. */
  memoryMs: number;
}

export const DEFAULT_ATTEMPT_POLICY: AttemptPolicy = { failures: 10, lockMs: 15 * 60_000, maxLockMs: 24 * 3_600_000, memoryMs: 24 * 3_600_000 };

/** A state with nothing in it: what an identifier never tried, or forgotten, has. */
export function freshState(now: Date): AttemptState {
  return { failures: 0, locks: 0, lastFailureAt: null, lockedUntil: null, forgetAt: now };
}

export type Admission =
  | { admitted: true; next: AttemptState; /** This attempt started a lock (the notice is due if it fails). */ locking: boolean; lockedUntil: Date | null }
  | { admitted: false; retryAfterSeconds: number };

/** Whether an attempt may be made now; if so, the state with it counted. */
export function admit(state: AttemptState, now: Date, policy: AttemptPolicy): Admission {
  const t = now.getTime();
  if (state.lockedUntil && t < state.lockedUntil.getTime()) {
    return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((state.lockedUntil.getTime() - t) / 1000)) };
  }
  const current = t >= state.forgetAt.getTime() ? freshState(now) : state;
  const failures = current.failures + 1;
  if (failures < policy.failures) {
    const next = { ...current, failures, lastFailureAt: now };
    return { admitted: true, next: { ...next, forgetAt: forgetAt(next, policy) }, locking: false, lockedUntil: null };
  }
  const locks = current.locks + 1;
  const lockedUntil = new Date(t + lockDuration(locks, policy));
  const next = { failures: 0, locks, lastFailureAt: now, lockedUntil };
  return { admitted: true, next: { ...next, forgetAt: forgetAt(next, policy) }, locking: true, lockedUntil };
}

/** How long the n-th lock (from 1) lasts. */
export function lockDuration(n: number, policy: Pick<AttemptPolicy, 'lockMs' | 'maxLockMs'>): number {
  // 2^(n-1) without overflow: past the cap, the cap.
  return Math.min(policy.lockMs * 2 ** Math.min(n - 1, 40), policy.maxLockMs);
}

function forgetAt(s: Pick<AttemptState, 'lastFailureAt' | 'lockedUntil'>, policy: AttemptPolicy): Date {
  const last = Math.max(s.lastFailureAt?.getTime() ?? 0, s.lockedUntil?.getTime() ?? 0);
  return new Date(last + policy.memoryMs);
}
