/**
 * The operator's alert webhook (ALERT_WEBHOOK_URL): a JSON body per notice, signed as tenant
 * webhooks are (ARCHITECTURE.md "Webhooks"): `x-service-timestamp` (Unix seconds) and
 * `x-service-signature` = lowercase hex HMAC-SHA256, key = ALERT_WEBHOOK_SECRET (UTF-8),
 * message = timestamp + "." + raw body. So one receiver's check serves both.
 */
import { createHmac } from 'node:crypto';
import type { AlertNotice } from './alerts';

/** `{id, type: alert.firing | alert.resolved, created_at, data: the notice}`, serialized once. */
export function alertWebhookBody(id: string, n: AlertNotice): string {
  return JSON.stringify({ id, type: `alert.${n.notice}`, created_at: n.at, data: n });
}

export function alertSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`).digest('hex');
}
