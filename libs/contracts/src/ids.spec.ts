import { idSchema, idTime, isId, monotonicIds, newId, ulid } from './ids';

describe('ids', () => {
  it('prefixes, and sorts by creation time', () => {
    const a = newId('message', 1_700_000_000_000);
    const b = newId('message', 1_700_000_000_001);
    expect(a).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(a < b).toBe(true);
    expect(idTime(a)?.getTime()).toBe(1_700_000_000_000);
  });

  it('encodes time and randomness as Crockford base32', () => {
    expect(ulid(0, new Uint8Array(10))).toBe('0'.repeat(26));
    expect(ulid(2 ** 48 - 1, new Uint8Array(10).fill(255))).toBe('7' + 'z'.repeat(25));
  });

  it('makes ids that sort in the order they were made, within a millisecond and when the clock steps back', () => {
    const next = monotonicIds('delivery');
    const ms = 1_700_000_000_000;
    const ids = [next(ms), next(ms), next(ms), next(ms - 5), next(ms), next(ms + 1), next(ms + 1)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // The time part stays the latest seen until the clock passes it.
    expect(ids.slice(0, 5).map((id) => idTime(id)?.getTime())).toEqual([ms, ms, ms, ms, ms]);
    expect(idTime(ids[5]!)?.getTime()).toBe(ms + 1);
    expect(ids.every((id) => isId('delivery', id))).toBe(true);
  });

  it('validates kind, prefix and body', () => {
    const id = newId('inbox');
    expect(isId('inbox', id)).toBe(true);
    expect(isId('message', id)).toBe(false);
    expect(isId('inbox', id.toUpperCase())).toBe(false);
    expect(isId('inbox', `${id}x`)).toBe(false);
    expect(isId('inbox', 'inb_' + 'u'.repeat(26))).toBe(false); // u is not in the alphabet
    expect(idSchema('inbox').safeParse('inb_1').success).toBe(false);
  });
});
