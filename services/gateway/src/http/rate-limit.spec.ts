import { RateLimiter } from './rate-limit';

describe('RateLimiter', () => {
  it('allows the burst, then refills at the rate, and says when to retry', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([1, 2, 3].map(() => limiter.take('k').ok)).toEqual([true, true, true]);
    const refused = limiter.take('k');
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 1 });
    expect(limiter.take('other').ok).toBe(true);
    now += 500;
    expect(limiter.take('k').ok).toBe(true);
    expect(limiter.take('k').ok).toBe(false);
  });

  it('is off at rate 0', () => {
    const limiter = new RateLimiter(0, 1);
    for (let i = 0; i < 100; i++) expect(limiter.take('k').ok).toBe(true);
  });
});
