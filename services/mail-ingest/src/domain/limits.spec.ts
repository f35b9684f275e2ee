import { ConnectionLimiter, MessageRateLimiter } from './limits';

describe('ConnectionLimiter', () => {
  it('counts connections per address up to the limit', () => {
    const l = new ConnectionLimiter(2);
    expect(l.acquire('a')).toBe(true);
    expect(l.acquire('a')).toBe(true);
    expect(l.acquire('a')).toBe(false);
    expect(l.acquire('b')).toBe(true);
    l.release('a');
    expect(l.acquire('a')).toBe(true);
    l.release('a');
    l.release('a');
    expect(l.count('a')).toBe(0);
  });
});

describe('MessageRateLimiter', () => {
  // The library reads Date.now and ends its windows with timers.
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('allows perMinute messages in a minute from the first', async () => {
    const l = new MessageRateLimiter(3);
    expect([await l.take('a'), await l.take('a'), await l.take('a'), await l.take('a')]).toEqual([true, true, true, false]);
    expect(await l.take('b')).toBe(true);
    jest.advanceTimersByTime(30_000);
    expect(await l.take('a')).toBe(false);
    jest.advanceTimersByTime(31_000);
    expect(await l.take('a')).toBe(true);
  });

  it('is off at 0', async () => {
    const l = new MessageRateLimiter(0);
    for (let i = 0; i < 1000; i++) expect(await l.take('a')).toBe(true);
  });
});
