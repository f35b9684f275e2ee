import { createHmac } from 'node:crypto';
import { newWebhookSecret, sign } from './signature';

describe('signature', () => {
  it('is lowercase hex HMAC-SHA256 of "timestamp.body" keyed with the whole secret string', () => {
    const secret = 'whsec_abc';
    const body = Buffer.from('{"id":"evt_1","note":"é"}', 'utf8');
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from('1700000000.'), body])).digest('hex');
    expect(sign(secret, 1_700_000_000, body)).toBe(expected);
    expect(sign(secret, 1_700_000_000, body)).toMatch(/^[0-9a-f]{64}$/);
    expect(sign(secret, 1_700_000_001, body)).not.toBe(expected);
    expect(sign('whsec_abd', 1_700_000_000, body)).not.toBe(expected);
  });

  it('makes secrets of 32 random bytes behind whsec_', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
