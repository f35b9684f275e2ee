import { openReply, sealReply } from './sealed-reply';

describe('sealed replies', () => {
  const body = Buffer.from(JSON.stringify({ text: 'the secret is 42'.repeat(1000) }));

  it('opens what it sealed, and the bucket holds no plain text', () => {
    const { sealed, key } = sealReply(body);
    expect(sealed.includes(Buffer.from('the secret'))).toBe(false);
    expect(openReply(sealed, key).equals(body)).toBe(true);
  });

  it('refuses an object changed in the bucket, another reply\'s key, and a malformed key', () => {
    const { sealed, key } = sealReply(body);
    const changed = Buffer.from(sealed);
    changed[10] = changed[10]! ^ 1;
    expect(() => openReply(changed, key)).toThrow();
    expect(() => openReply(sealed, sealReply(body).key)).toThrow();
    expect(() => openReply(sealed, 'short')).toThrow(/malformed/);
    expect(() => openReply(sealed, '')).toThrow(/malformed/);
  });
});
