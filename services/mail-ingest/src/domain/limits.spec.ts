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
  it('allows perMinute messages in any sliding minute', () => {
    let now = 1_000_000;
    const l = new MessageRateLimiter(3, () => now);
    expect([l.take('a'), l.take('a'), l.take('a'), l.take('a')]).toEqual([true, true, true, false]);
    expect(l.take('b')).toBe(true);
    now += 30_000;
    expect(l.take('a')).toBe(false);
    now += 31_000;
    expect(l.take('a')).toBe(true);
  });

  it('is off at 0', () => {
    const l = new MessageRateLimiter(0);
    for (let i = 0; i < 1000; i++) expect(l.take('a')).toBe(true);
  });
});
