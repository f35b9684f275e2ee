import { ttlCache } from './ttl-cache';

describe('ttlCache', () => {
  it('keeps an entry while it is younger than ttlMs, on the given clock (also one starting at 0)', () => {
    let now = 0;
    const cache = ttlCache<string, string>({ max: 10, ttlMs: 1_000, now: () => now });
    cache.set('a', 'x');
    now = 999;
    expect(cache.get('a')).toBe('x');
    now = 1_000;
    expect(cache.get('a')).toBeUndefined();
  });

  it('holds at 1 ms too', () => {
    let now = 5;
    const cache = ttlCache<string, string>({ max: 10, ttlMs: 1, now: () => now });
    cache.set('a', 'x');
    expect(cache.get('a')).toBe('x');
    now = 6;
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the least recently used entry beyond max', () => {
    const cache = ttlCache<string, number>({ max: 2, ttlMs: 60_000 });
    cache.set('a', 1).set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
  });

  it('refuses a TTL it cannot count', () => {
    for (const ttlMs of [0, -1, 1.5]) expect(() => ttlCache({ max: 1, ttlMs })).toThrow(RangeError);
  });
});
