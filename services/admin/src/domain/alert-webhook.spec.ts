import { createHmac } from 'node:crypto';
import { alertSignature, alertWebhookBody } from './alert-webhook';

describe('the alert webhook', () => {
  const notice = { key: 'service_down' as const, description: 'd', notice: 'firing' as const, detail: 'webhooks: 0 instance(s)', at: '2026-11-30T12:00:00.000Z' };

  it('carries the notice with a type and an id', () => {
    expect(JSON.parse(alertWebhookBody('evt_1', notice))).toEqual({ id: 'evt_1', type: 'alert.firing', created_at: notice.at, data: notice });
  });

  it('is signed as tenant webhooks are: HMAC-SHA256 of timestamp.body, lowercase hex', () => {
    const body = alertWebhookBody('evt_1', notice);
    const expected = createHmac('sha256', 'whsec_operator-secret').update(`1700000000.${body}`).digest('hex');
    expect(alertSignature('whsec_operator-secret', 1700000000, body)).toBe(expected);
  });
});
