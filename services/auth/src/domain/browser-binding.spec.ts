import { bindingHash, sameBrowser } from './browser-binding';

const secret = `mrb_${'a'.repeat(43)}`;

describe('the browser an attempt is bound to', () => {
  it('is the one that brings the same secret back', () => {
    const stored = bindingHash(secret);
    expect(sameBrowser(stored, secret)).toBe(true);
    expect(sameBrowser(stored, `mrb_${'b'.repeat(43)}`)).toBe(false);
    expect(sameBrowser(stored, undefined)).toBe(false);
  });

  it('is none for an attempt no browser started (keeps nothing, needs nothing)', () => {
    expect(bindingHash(undefined)).toBeNull();
    expect(sameBrowser(null, undefined)).toBe(true);
    expect(sameBrowser(null, secret)).toBe(true);
  });
});
