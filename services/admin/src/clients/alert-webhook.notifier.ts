/**
 * Tells the operator of an alert by a signed POST to ALERT_WEBHOOK_URL, through the guarded
 * fetch (libs/platform: public addresses only, unless ALERT_WEBHOOK_ALLOWED_CIDRS; no
 * redirects; one deadline). One attempt: a failure is logged (the mail and GET
 * /api/v1/admin/alerts still say it), never retried into a pile of stale notices.
 */
import { newId } from '@mailroom/contracts';
import { guardedFetch, IpPolicy, type Logger } from '@mailroom/platform';
import type { AlertNotice, AlertNotifier } from '../domain/alerts';
import { alertSignature, alertWebhookBody } from '../domain/alert-webhook';

export interface AlertWebhookOptions {
  url: string;
  secret: string;
  allowedCidrs: string[];
  timeoutMs: number;
}

export class AlertWebhookNotifier implements AlertNotifier {
  private readonly fetch;

  constructor(
    private readonly opts: AlertWebhookOptions,
    private readonly log: Logger,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.fetch = guardedFetch(new IpPolicy(opts.allowedCidrs), opts.timeoutMs);
  }

  async notify(n: AlertNotice): Promise<void> {
    const body = alertWebhookBody(newId('event'), n);
    const timestamp = Math.floor(this.nowMs() / 1000);
    try {
      const res = await this.fetch(this.opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-timestamp': String(timestamp), 'x-service-signature': alertSignature(this.opts.secret, timestamp, body) },
        body,
      });
      await res.body?.cancel();
      if (res.status < 200 || res.status > 299) this.log.warn({ alert: n.key, notice: n.notice, http_status: res.status }, 'alert webhook refused');
    } catch (err) {
      this.log.warn({ alert: n.key, notice: n.notice, err: err instanceof Error ? err.message : String(err) }, 'alert webhook failed');
    }
  }
}
