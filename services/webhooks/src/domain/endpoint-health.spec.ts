import { AUTO_DISABLE_REASON, disables, failuresAfter, FAILURE_THRESHOLD } from './endpoint-health';

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
});
