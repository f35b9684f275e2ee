/**
 * The verification state machine, as one pure function of a domain's state, a check's
 * results and the time: the next state, when to check again, and what to announce.
 *
 * - pending: never verified. All required records (SPF, DKIM) verified -> verified.
 * - verified: a required record missing or wrong -> failed (with the reason); a lookup that
 *   timed out or failed for now changes nothing (temporary_failure is not a failure).
 * - failed: a verified domain whose records broke; all required records verified again ->
 *   verified.
 * A name another organization holds verified keeps the domain from becoming verified.
 * `domain.verified` is emitted the first time a domain becomes verified, never again (the spec
 * emits it on the transition from "not verified"; a domain that recovers from failed is
 * announced by the fact alone). Schedule: a verified domain is checked again every recheck
 * interval; one that is not, or whose lookups fail for now, after a backoff that doubles with
 * each check in a row that did not verify it, up to a ceiling.
 */
import type { DomainStatus, RecordKind } from '@mailroom/contracts';
import { REQUIRED_KINDS, type Checks } from './records';

export interface Schedule {
  /** The first retry of a domain that did not verify; doubles with each such check in a row. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How often a verified domain is checked again. */
  recheckMs: number;
}

export interface VerificationState {
  status: DomainStatus;
  consecutive_failures: number;
  verified_at: Date | null;
  /** Whether domain.verified was emitted already (once per domain). */
  announced: boolean;
}

export interface Outcome {
  status: DomainStatus;
  failure_reason: string | null;
  consecutive_failures: number;
  verified_at: Date | null;
  next_check_at: Date;
  /** Emit domain.verified now (the first verification). */
  emitVerified: boolean;
  /** The fact to publish, when the domain's standing changed. */
  fact: 'verified' | 'unverified' | null;
}

export function backoffMs(failures: number, s: Schedule): number {
  const exp = Math.min(Math.max(failures - 1, 0), 30);
  return Math.min(s.backoffBaseMs * 2 ** exp, s.backoffMaxMs);
}

const NAMES: Record<RecordKind, string> = { spf: 'SPF', dkim: 'DKIM', dmarc: 'DMARC', mx: 'MX', bounce: 'bounce', dkim_next: 'new DKIM' };

/**
 * When to look for a pending rotation's record again: half the rotation's age, between the
 * backoff's first step and its ceiling, so a record published soon after the rotation is found
 * soon, and one never published costs few lookups.
 */
export function rotationRecheckMs(rotatedAt: Date, now: Date, s: Schedule): number {
  return Math.min(Math.max((now.getTime() - rotatedAt.getTime()) / 2, s.backoffBaseMs), s.backoffMaxMs);
}

/** Why the required records do not verify, in words (missing, mismatch, temporary), or null when they do. */
export function reasonOf(checks: Checks): string | null {
  const parts = REQUIRED_KINDS.flatMap((kind) => {
    const c = checks[kind];
    if (!c) return [`${NAMES[kind]} record not checked yet`];
    if (c.status === 'verified') return [];
    if (c.reason === 'missing') return [`${NAMES[kind]} record missing`];
    if (c.reason === 'mismatch') return [`${NAMES[kind]} record does not match (found ${c.found.map((f) => JSON.stringify(f)).join(', ')})`];
    return [`${NAMES[kind]} record could not be looked up (${c.error ?? 'DNS did not answer'}; retried later)`];
  });
  return parts.length ? parts.join('; ') : null;
}

export function nextState(state: VerificationState, checks: Checks, now: Date, schedule: Schedule, claimedElsewhere: boolean): Outcome {
  const required = REQUIRED_KINDS.map((k) => checks[k]);
  const allVerified = required.every((c) => c?.status === 'verified');
  const broken = required.some((c) => c?.status === 'failed');
  const at = now.getTime();
  if (allVerified && claimedElsewhere) {
    const failures = state.consecutive_failures + 1;
    return {
      status: state.status === 'verified' ? 'failed' : state.status,
      failure_reason: 'another organization has this domain verified; it must delete it (or its records must stop verifying there) first',
      consecutive_failures: failures,
      verified_at: state.verified_at,
      next_check_at: new Date(at + backoffMs(failures, schedule)),
      emitVerified: false,
      fact: state.status === 'verified' ? 'unverified' : null,
    };
  }
  if (allVerified) {
    const becomes = state.status !== 'verified';
    return {
      status: 'verified',
      failure_reason: null,
      consecutive_failures: 0,
      verified_at: becomes ? now : state.verified_at,
      next_check_at: new Date(at + schedule.recheckMs),
      emitVerified: becomes && !state.announced,
      fact: becomes ? 'verified' : null,
    };
  }
  const failures = state.consecutive_failures + 1;
  const next = new Date(at + backoffMs(failures, schedule));
  // A verified domain stays verified while its lookups merely fail for now.
  if (state.status === 'verified' && !broken) {
    return { status: 'verified', failure_reason: null, consecutive_failures: failures, verified_at: state.verified_at, next_check_at: next, emitVerified: false, fact: null };
  }
  const status: DomainStatus = state.status === 'pending' ? 'pending' : 'failed';
  return {
    status,
    failure_reason: reasonOf(checks),
    consecutive_failures: failures,
    verified_at: state.verified_at,
    next_check_at: next,
    emitVerified: false,
    fact: state.status === 'verified' ? 'unverified' : null,
  };
}
