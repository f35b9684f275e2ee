import { newApiKeySecret, randomBase62, scopeOf } from './api-keys';

describe('API key secrets', () => {
  it('are mr_ and 43 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, () => newApiKeySecret()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^mr_[0-9A-Za-z]{43}$/);
  });

  it('uses every base62 character with no visible bias', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(700); // expected 1000 each
  });
});

describe('API key permission sets', () => {
  it('stores a named scope alone (full by default) and a list as custom, deduplicated in table order', () => {
    expect(scopeOf({})).toEqual({ scope: 'full', permissions: null });
    expect(scopeOf({ scope: 'send_only' })).toEqual({ scope: 'send_only', permissions: null });
    expect(scopeOf({ permissions: ['mail.send', 'inboxes.read', 'mail.send'] })).toEqual({ scope: 'custom', permissions: ['inboxes.read', 'mail.send'] });
    expect(scopeOf({ scope: 'custom', permissions: ['mail.read'] })).toEqual({ scope: 'custom', permissions: ['mail.read'] });
  });

  it('refuses a custom scope without a list, a list with a named scope, and what only people hold', () => {
    expect(() => scopeOf({ scope: 'custom' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => scopeOf({ scope: 'read_only', permissions: ['mail.read'] })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => scopeOf({ permissions: ['keys.manage'] })).toThrow(expect.objectContaining({ code: 'invalid_request', message: expect.stringMatching(/cannot hold keys.manage/) }));
  });
});
