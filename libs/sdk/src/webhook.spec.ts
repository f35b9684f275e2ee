import { createHmac } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from './webhook';

const secret = 'whsec_test';
const body = JSON.stringify({ id: 'evt_1', type: 'message.received', timestamp: '2026-01-01T00:00:00.000Z', org_id: 'org_1', env_id: 'env_1', data: { message_id: 'msg_1' } });
const at = 1_767_225_600; // 2026-01-01T00:00:00Z
const sign = (ts: string, raw: string, key = secret) => createHmac('sha256', key).update(`${ts}.${raw}`).digest('hex');
const headers = (ts = String(at), sig = sign(String(at), body)) => ({ 'x-service-timestamp': ts, 'x-service-signature': sig });
const now = (seconds: number) => () => seconds * 1000;
const reason = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
  return 'verified';
};

describe('verifyWebhook', () => {
  it('answers the envelope of a delivery signed with the secret, from a Buffer, a string or fetch Headers', () => {
    expect(verifyWebhook(Buffer.from(body), headers(), secret, { now: now(at) })).toMatchObject({ id: 'evt_1', data: { message_id: 'msg_1' } });
    expect(verifyWebhook(body, headers(), secret, { now: now(at + 299) }).type).toBe('message.received');
    expect(verifyWebhook(body, new Headers(headers()), secret, { now: now(at - 299) }).id).toBe('evt_1');
  });

  it('refuses a wrong secret, a changed body, a re-serialized body and a malformed signature', () => {
    expect(reason(() => verifyWebhook(body, headers(String(at), sign(String(at), body, 'whsec_other')), secret, { now: now(at) }))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(body.replace('msg_1', 'msg_2'), headers(), secret, { now: now(at) }))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), headers(), secret, { now: now(at) }))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(body, headers(String(at), sign(String(at), body).toUpperCase()), secret, { now: now(at) }))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(body, headers(String(at), 'abc'), secret, { now: now(at) }))).toBe('bad_signature');
  });

  it('refuses a timestamp more than 5 minutes away (or the given tolerance), and a signature of another timestamp', () => {
    expect(reason(() => verifyWebhook(body, headers(), secret, { now: now(at + 301) }))).toBe('expired');
    expect(reason(() => verifyWebhook(body, headers(), secret, { now: now(at - 301) }))).toBe('expired');
    expect(reason(() => verifyWebhook(body, headers(), secret, { now: now(at + 599), toleranceSeconds: 600 }))).toBe('verified');
    expect(reason(() => verifyWebhook(body, headers(String(at + 1), sign(String(at), body)), secret, { now: now(at) }))).toBe('bad_signature');
  });

  it('refuses missing headers and a timestamp that is not Unix seconds', () => {
    expect(reason(() => verifyWebhook(body, {}, secret))).toBe('missing_headers');
    expect(reason(() => verifyWebhook(body, { 'x-service-timestamp': String(at) }, secret))).toBe('missing_headers');
    expect(reason(() => verifyWebhook(body, headers('1e9', sign('1e9', body)), secret, { now: now(at) }))).toBe('bad_timestamp');
  });

  it('refuses a signed body that is not JSON', () => {
    expect(reason(() => verifyWebhook('not json', headers(String(at), sign(String(at), 'not json')), secret, { now: now(at) }))).toBe('bad_body');
  });
});
