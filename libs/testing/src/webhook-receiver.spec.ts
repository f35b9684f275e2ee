import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verifySignature, verifyStandardSignature } from './webhook-receiver';

// Signed here by hand, as a customer's sender would: the receiver is the tests' independent
// check of the service's signatures, so it is not checked against the service's own sign().
const secret = 'whsec_receiver-test';
const timestamp = 1_700_000_000;
const raw = Buffer.from('{"id":"evt_1","type":"message.received"}');
const signatureOf = (key: string, ts: number, body: Buffer) => createHmac('sha256', key).update(`${ts}.`).update(body).digest('hex');
const signature = signatureOf(secret, timestamp, raw);
/** The receiver's clock `seconds` after the timestamp (before it when negative). */
const at = (seconds: number) => (timestamp + seconds) * 1000;

describe('verifySignature', () => {
  it('accepts a correct signature within the window', () => {
    expect(verifySignature(secret, String(timestamp), signature, raw, at(0))).toBe(true);
    expect(verifySignature(secret, String(timestamp), signature, raw, at(42))).toBe(true);
  });

  it('accepts a timestamp exactly 300 s old or ahead', () => {
    expect(verifySignature(secret, String(timestamp), signature, raw, at(300))).toBe(true);
    expect(verifySignature(secret, String(timestamp), signature, raw, at(-300))).toBe(true);
  });

  it('rejects a timestamp 301 s old or 301 s in the future', () => {
    expect(verifySignature(secret, String(timestamp), signature, raw, at(301))).toBe(false);
    expect(verifySignature(secret, String(timestamp), signature, raw, at(-301))).toBe(false);
  });

  it('rejects a body with one byte changed', () => {
    const tampered = Buffer.from(raw.toString('utf8').replace('evt_1', 'evt_2'));
    expect(verifySignature(secret, String(timestamp), signature, tampered, at(0))).toBe(false);
  });

  it("rejects another secret's signature", () => {
    const other = signatureOf('whsec_someone-else', timestamp, raw);
    expect(verifySignature(secret, String(timestamp), other, raw, at(0))).toBe(false);
  });

  it('rejects uppercase hex and a truncated signature', () => {
    // The same bytes in uppercase: the spec's signature is lowercase hex, and nothing else passes.
    expect(signature.toUpperCase()).not.toBe(signature);
    expect(verifySignature(secret, String(timestamp), signature.toUpperCase(), raw, at(0))).toBe(false);
    expect(verifySignature(secret, String(timestamp), signature.slice(0, 62), raw, at(0))).toBe(false);
    expect(verifySignature(secret, String(timestamp), signature.slice(0, 63), raw, at(0))).toBe(false);
  });
});

describe('verifyStandardSignature', () => {
  // Signed by the standardwebhooks package, as a Svix-style sender would.
  const standardSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const headersAt = (ts: number, body = raw) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(ts),
    'webhook-signature': `v0,ignored ${new Webhook(standardSecret).sign('evt_1', new Date(ts * 1000), body.toString('utf8'))}`,
  });

  it('accepts what the standardwebhooks package signs, within the window', () => {
    expect(verifyStandardSignature(standardSecret, headersAt(timestamp), raw, at(0))).toBe(true);
    expect(verifyStandardSignature(standardSecret, headersAt(timestamp), raw, at(300))).toBe(true);
  });

  it('rejects another secret, another id, a changed body and a stale timestamp', () => {
    expect(verifyStandardSignature(`whsec_${Buffer.alloc(32, 8).toString('base64')}`, headersAt(timestamp), raw, at(0))).toBe(false);
    expect(verifyStandardSignature(standardSecret, { ...headersAt(timestamp), 'webhook-id': 'evt_2' }, raw, at(0))).toBe(false);
    expect(verifyStandardSignature(standardSecret, headersAt(timestamp), Buffer.from('{}'), at(0))).toBe(false);
    expect(verifyStandardSignature(standardSecret, headersAt(timestamp), raw, at(301))).toBe(false);
    expect(verifyStandardSignature(standardSecret, {}, raw, at(0))).toBe(false);
  });
});
