import { ManualClock } from '@mailroom/platform';
import type { Checks, RecordCheck } from './records';
import { backoffMs, nextState, type Schedule, type VerificationState } from './verification';

const schedule: Schedule = { backoffBaseMs: 60_000, backoffMaxMs: 6 * 3_600_000, recheckMs: 24 * 3_600_000 };
const at = '2026-11-28T10:00:00.000Z';
const ok: RecordCheck = { status: 'verified', reason: null, found: [], checked_at: at };
const missing: RecordCheck = { status: 'failed', reason: 'missing', found: [], checked_at: at };
const wrong: RecordCheck = { status: 'failed', reason: 'mismatch', found: ['v=spf1 -all'], checked_at: at };
const timeout: RecordCheck = { status: 'temporary_failure', reason: 'temporary_failure', found: [], checked_at: at };
const all = (spf: RecordCheck, dkim: RecordCheck, rest: Partial<Checks> = {}): Checks => ({ spf, dkim, dmarc: missing, mx: missing, bounce: missing, ...rest });
const pending: VerificationState = { status: 'pending', consecutive_failures: 0, verified_at: null, announced: false };

describe('backoff', () => {
  it('doubles from the base with each check in a row that did not verify, up to the ceiling', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, schedule) / 60_000)).toEqual([1, 2, 4, 8, 16]);
    expect(backoffMs(10, schedule)).toBe(6 * 3_600_000);
    expect(backoffMs(1_000, schedule)).toBe(6 * 3_600_000);
  });
});

describe('the verification state machine', () => {
  it('keeps a pending domain pending, with the reason, checking again later and later', () => {
    const clock = new ManualClock(new Date(at));
    let state = pending;
    const nexts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const o = nextState(state, all(wrong, missing), clock.now(), schedule, false);
      expect([o.status, o.emitVerified, o.fact]).toEqual(['pending', false, null]);
      expect(o.failure_reason).toBe('SPF record does not match (found "v=spf1 -all"); DKIM record missing');
      nexts.push(o.next_check_at.getTime() - clock.now().getTime());
      state = { ...state, consecutive_failures: o.consecutive_failures };
      clock.advance(3_600_000);
    }
    expect(nexts).toEqual([60_000, 120_000, 240_000]);
  });

  it('verifies once SPF and DKIM check out, whatever DMARC, MX and bounce say, and emits domain.verified the first time only', () => {
    const clock = new ManualClock(new Date(at));
    const first = nextState({ ...pending, consecutive_failures: 4 }, all(ok, ok), clock.now(), schedule, false);
    expect(first).toMatchObject({ status: 'verified', failure_reason: null, consecutive_failures: 0, emitVerified: true, fact: 'verified', verified_at: clock.now() });
    expect(first.next_check_at.getTime() - clock.now().getTime()).toBe(schedule.recheckMs);
    const verified: VerificationState = { status: 'verified', consecutive_failures: 0, verified_at: first.verified_at, announced: true };
    clock.advance(1_000);
    const again = nextState(verified, all(ok, ok), clock.now(), schedule, false);
    expect(again).toMatchObject({ status: 'verified', emitVerified: false, fact: null, verified_at: first.verified_at });
  });

  it('moves a verified domain whose required record broke to failed, and back without a second domain.verified', () => {
    const clock = new ManualClock(new Date(at));
    const verified: VerificationState = { status: 'verified', consecutive_failures: 0, verified_at: clock.now(), announced: true };
    clock.advance(86_400_000);
    const broke = nextState(verified, all(ok, missing), clock.now(), schedule, false);
    expect(broke).toMatchObject({ status: 'failed', failure_reason: 'DKIM record missing', fact: 'unverified', emitVerified: false });
    clock.advance(60_000);
    const fixed = nextState({ status: 'failed', consecutive_failures: 1, verified_at: verified.verified_at, announced: true }, all(ok, ok), clock.now(), schedule, false);
    expect(fixed).toMatchObject({ status: 'verified', fact: 'verified', emitVerified: false, verified_at: clock.now() });
  });

  it('does not fail a verified domain for a DNS timeout: it stays verified and is checked again soon', () => {
    const clock = new ManualClock(new Date(at));
    const verified: VerificationState = { status: 'verified', consecutive_failures: 0, verified_at: clock.now(), announced: true };
    const o = nextState(verified, all(ok, timeout), clock.now(), schedule, false);
    expect(o).toMatchObject({ status: 'verified', fact: null, consecutive_failures: 1 });
    expect(o.next_check_at.getTime() - clock.now().getTime()).toBe(60_000);
    // One record timing out and another missing: the missing one decides.
    expect(nextState(verified, all(missing, timeout), clock.now(), schedule, false).status).toBe('failed');
    // A pending domain whose records time out stays pending and says why.
    expect(nextState(pending, all(ok, timeout), clock.now(), schedule, false).failure_reason).toMatch(/DKIM record could not be looked up/);
  });

  it('keeps a domain another organization holds verified from verifying', () => {
    const o = nextState(pending, all(ok, ok), new Date(at), schedule, true);
    expect(o).toMatchObject({ status: 'pending', emitVerified: false, fact: null });
    expect(o.failure_reason).toMatch(/another organization/);
  });
});
