import { randomBytes } from 'node:crypto';
import { constantTimeEqual, randomToken, SecretBox } from './crypto';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32).toString('base64'));

  it('seals and opens, bound to its associated data', () => {
    const sealed = box.seal('private key', 'kid-1');
    expect(sealed.includes(Buffer.from('private key'))).toBe(false);
    expect(box.open(sealed, 'kid-1').toString()).toBe('private key');
    expect(() => box.open(sealed, 'kid-2')).toThrow();
  });

  it('detects tampering and refuses other keys', () => {
    const sealed = box.seal('secret');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox(randomBytes(32).toString('base64')).open(sealed)).toThrow();
    expect(() => new SecretBox(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});

describe('tokens', () => {
  it('makes prefixed random tokens and compares in constant time', () => {
    const t = randomToken('mrt_');
    expect(t).toMatch(/^mrt_[A-Za-z0-9_-]{43}$/);
    expect(constantTimeEqual(t, `${t}`)).toBe(true);
    expect(constantTimeEqual(t, randomToken('mrt_'))).toBe(false);
    expect(constantTimeEqual('a', 'ab')).toBe(false);
  });
});
