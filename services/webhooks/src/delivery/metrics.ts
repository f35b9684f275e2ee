/**
 * Webhook delivery attempts' metrics: attempts by outcome (delivered, or the failure's kind:
 * the delivery error codes of http-client.ts, a bounded set) and their latency (the POST,
 * as recorded on the attempt). No endpoint, event or tenant id: those are the delivery records'.
 */
import { DURATION_BUCKETS_S, SERVICE_ATTRIBUTE, meterOf } from '@mailroom/platform';
import type { FinishedAttempt } from '../repo/delivery.repository';

export class AttemptMetrics {
  private readonly meter = meterOf();
  private readonly attempts = this.meter.createCounter('mailroom.webhook.attempts', { description: 'Webhook delivery attempts by outcome (delivered, failed) and, when failed, error.type', unit: '{attempt}' });
  private readonly duration = this.meter.createHistogram('mailroom.webhook.attempt.duration', {
    description: 'Duration of webhook delivery attempts (the POST and its answer), by outcome',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  private readonly delivered = { 'mailroom.webhook.outcome': 'delivered', [SERVICE_ATTRIBUTE]: 'webhooks' };
  private readonly failed = new Map<string, Record<string, string>>();

  attempted(attempt: Pick<FinishedAttempt, 'ok' | 'error' | 'durationMs'>): void {
    const attributes = attempt.ok ? this.delivered : this.failedWith(attempt.error ?? 'failed');
    this.attempts.add(1, attributes);
    this.duration.record(attempt.durationMs / 1000, attributes);
  }

  private failedWith(error: string): Record<string, string> {
    let attributes = this.failed.get(error);
    if (!attributes) this.failed.set(error, (attributes = { 'mailroom.webhook.outcome': 'failed', 'error.type': error, [SERVICE_ATTRIBUTE]: 'webhooks' }));
    return attributes;
  }
}
