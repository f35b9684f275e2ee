import { failureLimiter } from './failure-limiter.client';

describe('failureLimiter', () => {
  // The library reads Date.now and ends its windows with timers.
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('lets a key fail `count` times in the window, then says how long until the window ends', async () => {
    const limiter = failureLimiter({ count: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      expect(await limiter.wait('usr_a')).toBeUndefined();
      await limiter.failed('usr_a');
    }
    expect(await limiter.wait('usr_a')).toBe(60);
    expect(await limiter.wait('usr_b')).toBeUndefined();
    // More failures while refused are counted without error.
    await limiter.failed('usr_a');
    jest.advanceTimersByTime(45_000);
    expect(await limiter.wait('usr_a')).toBe(15);
    jest.advanceTimersByTime(15_000);
    expect(await limiter.wait('usr_a')).toBeUndefined();
  });
});
