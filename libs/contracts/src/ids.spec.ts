import { idSchema, idTime, isId, newId, ulid } from './ids';

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
