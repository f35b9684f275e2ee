import { afterAttempts, AUTO_DISABLE_REASON, disables, failuresAfter, FAILURE_THRESHOLD } from './endpoint-health';

const fail = (n: number) => Array<boolean>(n).fill(false);

describe('endpoint health', () => {
  it('is the spec 50, and the reason says it', () => {
    expect(FAILURE_THRESHOLD).toBe(50);
    expect(AUTO_DISABLE_REASON).toBe('disabled after 50 consecutive failed deliveries');
  });

  it('counts failures on from the count before; a success starts again', () => {
    expect(failuresAfter(0, [])).toBe(0);
    expect(failuresAfter(3, fail(2))).toBe(5);
    expect(failuresAfter(3, [false, true])).toBe(0);
    expect(failuresAfter(3, [false, true, false, false])).toBe(2);
  });

  it('50 consecutive failures disable; 49 + 1 success + 49 does not', () => {
    expect(disables(failuresAfter(0, fail(50)))).toBe(true);
    expect(disables(failuresAfter(0, fail(49)))).toBe(false);
    expect(disables(failuresAfter(49, [false]))).toBe(true);
    expect(disables(failuresAfter(0, [...fail(49), true, ...fail(49)]))).toBe(false);
    expect(disables(failuresAfter(0, [...fail(49), true, ...fail(50)]))).toBe(true);
  });

  it('a run of attempts disables an enabled endpoint once, at the threshold; a disabled one keeps counting', () => {
    expect(afterAttempts({ failures: 48, disabled: false }, fail(2))).toEqual({ failures: 50, disabled: true, disabledNow: true });
    expect(afterAttempts({ failures: 48, disabled: false }, [false, true, false])).toEqual({ failures: 1, disabled: false, disabledNow: false });
    expect(afterAttempts({ failures: 50, disabled: true }, fail(1))).toEqual({ failures: 51, disabled: true, disabledNow: false });
    expect(afterAttempts({ failures: 3, disabled: true }, [true])).toEqual({ failures: 0, disabled: true, disabledNow: false });
    expect(afterAttempts({ failures: 0, disabled: false }, fail(3), 3)).toEqual({ failures: 3, disabled: true, disabledNow: true });
    expect(afterAttempts({ failures: 3, disabled: false }, [], 3)).toEqual({ failures: 3, disabled: false, disabledNow: false });
  });
});
