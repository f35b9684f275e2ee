import { newApiKeySecret, randomBase62 } from './api-keys';

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
