/** The rule of the brute-force guard on a moved clock: the limit, the lock and its growth, the memory, the refusal's Retry-After. */
import { ManualClock } from '@mailroom/platform';
import { admit, freshState, lockDuration, type AttemptPolicy, type AttemptState } from './attempt-limits';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const policy: AttemptPolicy = { failures: 10, lockMs: 15 * MINUTE, maxLockMs: 24 * HOUR, memoryMs: 24 * HOUR };

/** Attempts one after another on `clock`: each admission's state feeds the next. */
function attempts(clock: ManualClock, start: AttemptState = freshState(clock.now())) {
  let state = start;
  return {
    get state() {
      return state;
    },
    /** true: admitted; 'lock': admitted, and it started a lock; a number: refused, Retry-After. */
    try(): true | 'lock' | number {
      const a = admit(state, clock.now(), policy);
      if (!a.admitted) return a.retryAfterSeconds;
      state = a.next;
      return a.locking ? 'lock' : true;
    },
  };
}

describe('admit', () => {
  it('admits 10 attempts, the 10th starting a 15-minute lock; then refuses every attempt until the lock ends, saying when', () => {
    const clock = new ManualClock(new Date('2026-11-28T13:00:00.000Z'));
    const a = attempts(clock);
    const seen = Array.from({ length: 10 }, () => a.try());
    expect(seen).toEqual([...Array(9).fill(true), 'lock']);
    expect(a.state.lockedUntil).toEqual(new Date(clock.now().getTime() + 15 * MINUTE));
    expect(a.try()).toBe(900);
    clock.advance(15 * MINUTE - 1_500);
    expect(a.try()).toBe(2);
    clock.advance(1_000);
    expect(a.try()).toBe(1);
    clock.advance(500);
    expect(a.try()).toBe(true);
    expect(a.state.failures).toBe(1);
  });

  it('makes each next lock twice as long, up to the cap', () => {
    const clock = new ManualClock();
    const a = attempts(clock);
    const locks: number[] = [];
    for (let n = 0; n < 9; n++) {
      while (a.try() !== 'lock');
      locks.push((a.state.lockedUntil!.getTime() - clock.now().getTime()) / MINUTE);
      clock.set(a.state.lockedUntil!);
    }
    expect(locks).toEqual([15, 30, 60, 120, 240, 480, 960, 1440, 1440]);
    expect(lockDuration(10_000, policy)).toBe(24 * HOUR);
  });

  it('counts failures spread out in time: a patient guesser is locked too, unless a whole day passes without one', () => {
    const clock = new ManualClock();
    const a = attempts(clock);
    // 9 failures, an hour apart: none forgotten.
    for (let i = 0; i < 9; i++) {
      expect(a.try()).toBe(true);
      clock.advance(HOUR);
    }
    expect(a.try()).toBe('lock');

    const b = attempts(clock);
    for (let i = 0; i < 9; i++) b.try();
    clock.advance(24 * HOUR - 1);
    expect([b.try(), b.state.failures]).toEqual(['lock', 0]);
    const c = attempts(clock);
    for (let i = 0; i < 9; i++) c.try();
    clock.advance(24 * HOUR);
    expect([c.try(), c.state.failures]).toEqual([true, 1]);
  });

  it('forgets the growth of the locks a day after the last one ended, not before', () => {
    const clock = new ManualClock();
    const a = attempts(clock);
    while (a.try() !== 'lock');
    clock.set(a.state.lockedUntil!);
    while (a.try() !== 'lock');
    expect(a.state.locks).toBe(2);
    // The second lock (30 min) ends; a day less a moment later the next lock is the third.
    clock.set(new Date(a.state.lockedUntil!.getTime() + 24 * HOUR - 1));
    expect(a.state.forgetAt).toEqual(new Date(a.state.lockedUntil!.getTime() + 24 * HOUR));
    const kept = attempts(clock, a.state);
    while (kept.try() !== 'lock');
    expect(kept.state.locks).toBe(3);
    clock.set(new Date(a.state.lockedUntil!.getTime() + 24 * HOUR));
    const forgotten = attempts(clock, a.state);
    while (forgotten.try() !== 'lock');
    expect([forgotten.state.locks, forgotten.state.lockedUntil!.getTime() - clock.now().getTime()]).toEqual([1, 15 * MINUTE]);
  });

  it('keeps a state as long as it matters: a day after the last failure or the end of the lock', () => {
    const clock = new ManualClock();
    const a = attempts(clock);
    a.try();
    expect(a.state.forgetAt).toEqual(new Date(clock.now().getTime() + 24 * HOUR));
    for (let i = 0; i < 9; i++) a.try();
    expect(a.state.forgetAt).toEqual(new Date(clock.now().getTime() + 15 * MINUTE + 24 * HOUR));
  });
});
