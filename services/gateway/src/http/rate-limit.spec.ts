import { RateLimiter } from './rate-limit';

describe('RateLimiter', () => {
  // The library reads Date.now and ends its windows with timers.
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('allows the burst, then the same again once burst / rate seconds passed, and says when to retry', async () => {
    const limiter = new RateLimiter(2, 3);
    const oks = async (n: number) => Promise.all(Array.from({ length: n }, async () => (await limiter.take('k')).ok));
    expect(await oks(3)).toEqual([true, true, true]);
    const refused = await limiter.take('k');
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 2 });
    expect((await limiter.take('other')).ok).toBe(true);
    jest.advanceTimersByTime(1_000);
    // A token bucket would have refilled two by now; the window lasts 1.5 s.
    expect(await limiter.take('k')).toMatchObject({ ok: false, retryAfterSeconds: 1 });
    jest.advanceTimersByTime(500);
    expect(await oks(4)).toEqual([true, true, true, false]);
  });

  it('is off at rate 0', async () => {
    const limiter = new RateLimiter(0, 1);
    for (let i = 0; i < 100; i++) expect((await limiter.take('k')).ok).toBe(true);
  });
});
