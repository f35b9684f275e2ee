import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { deliveryHeaders, newWebhookSecret, sign, signStandard, standardKey } from './signature';

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

  it('makes secrets of 32 random bytes behind whsec_, in standard base64', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it('signs the Standard Webhooks way: the standardwebhooks package verifies it', () => {
    const secret = newWebhookSecret();
    const body = Buffer.from('{"id":"evt_01J","type":"message.received","data":{"subject":"é"}}', 'utf8');
    const now = Math.floor(Date.now() / 1000);
    const headers = deliveryHeaders({ text: secret, key: standardKey(secret) }, 'evt_01J', now, body);
    expect(headers['webhook-id']).toBe('evt_01J');
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(headers['x-service-timestamp']).toBe(String(now));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body.toString('utf8'), headers)).toMatchObject({ id: 'evt_01J' });
    // The package's own signature is ours, byte for byte.
    expect(new Webhook(secret).sign('evt_01J', new Date(now * 1000), body.toString('utf8'))).toBe(headers['webhook-signature']);
    // And the spec's header is there beside it, unchanged.
    expect(headers['x-service-signature']).toBe(sign(secret, now, body));
    expect(() => new Webhook(newWebhookSecret()).verify(body.toString('utf8'), headers)).toThrow();
  });

  it('keys the Standard Webhooks signature of a secret made before in base64url with the same bytes', () => {
    const bytes = Buffer.from('00ff10fe20fd30fc40fb50fa60f970f880f790f6a0f5b0f4c0f3d0f2e0f1f0e0', 'hex');
    const old = `whsec_${bytes.toString('base64url')}`;
    expect(standardKey(old)).toEqual(bytes);
    const body = Buffer.from('{}');
    expect(signStandard(standardKey(old), 'evt_1', 1_700_000_000, body)).toBe(new Webhook(`whsec_${bytes.toString('base64')}`).sign('evt_1', new Date(1_700_000_000_000), '{}'));
  });
});
