/**
 * One attempt of a delivery, the job's policy in one place: sign it now (both signatures,
 * domain/signature.ts), post it (the receiver's 30 s deadline, SSRF guard: http-client.ts),
 * and decide from the answer: delivered, tried again at a time on the schedule with jitter
 * and `Retry-After` (domain/retry-policy.ts), or given up. Recording it is recorder.ts's.
 */
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import { storedContext } from '@mailroom/messaging';
import type { Clock, Logger } from '@mailroom/platform';
import type { ClaimedJob, FinishedAttempt } from '../repo/delivery.repository';
import { parseRetryAfter, type RetryPolicy } from '../domain/retry-policy';
import { deliveryHeaders } from '../domain/signature';
import type { PostResult } from './http-client';

export interface Poster {
  post(url: string, body: Buffer, headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult>;
}

export interface AttemptDeps {
  http: Poster;
  retries: RetryPolicy;
  clock: Clock;
  log: Logger;
  /** Attempt ids increase in the order attempts start (records list newest first by id). */
  newAttemptId: (ms: number) => string;
}

/** The endpoint's secret, as signing needs it (it may fail to open: a failed attempt, not the receiver's fault). */
export type SecretOf = (job: ClaimedJob) => { text: string; key: Buffer };

/** Makes the attempt; `aborted` when it was cut short (shutdown, a lapsed lease): nothing to record, sent again. */
export async function attemptDelivery(job: ClaimedJob, secretOf: SecretOf, deps: AttemptDeps, signal: AbortSignal): Promise<FinishedAttempt | 'aborted'> {
  const attempt = job.attempts + 1;
  const at = deps.clock.now();
  const timestamp = Math.floor(at.getTime() / 1000);
  let result: PostResult;
  try {
    result = await deps.http.post(job.url, job.body, deliveryHeaders(secretOf(job), job.event_id, timestamp, job.body), signal);
  } catch (err) {
    // Not the receiver's fault (e.g. a secret that no longer opens): recorded as a failed attempt, retried on schedule.
    deps.log.error({ err, endpoint_id: job.endpoint_id, event_id: job.event_id }, 'could not attempt delivery');
    result = { ok: false, httpStatus: 0, error: 'internal_error', timedOut: false, durationMs: 0 };
  }
  if (result.error === 'aborted') return 'aborted';
  let retryAt: Date | null = null;
  if (!result.ok) {
    const now = deps.clock.now();
    const delay = deps.retries.delayAfter(
      attempt,
      { timedOut: result.timedOut, httpStatus: result.httpStatus, retryAfterSeconds: parseRetryAfter(result.retryAfter, now) },
      job.max_attempts,
    );
    if (delay !== undefined) retryAt = new Date(now.getTime() + delay);
  }
  return {
    attemptId: deps.newAttemptId(at.getTime()),
    job,
    attempt,
    trigger: attempt === 1 && job.origin !== 'event' ? 'manual' : 'scheduled',
    ok: result.ok,
    httpStatus: result.httpStatus,
    error: result.error ?? null,
    responseBody: result.responseBody ?? null,
    durationMs: result.durationMs,
    at,
    retryAt,
  };
}

const tracer = trace.getTracer('@mailroom/webhooks');

/**
 * Runs an attempt in a span of its own, the child of its event's handling (the traceparent
 * stored with the event: every attempt, a retry by another instance or after a restart
 * too, is in the mail's trace; none kept: a trace of its own, not a child of whatever ran
 * before): the POST's HTTP client span (undici's instrumentation), with the traceparent it
 * sends, is its child. Ids and the outcome only: never the body, the URL's query or the signatures.
 */
export async function tracedAttempt(job: ClaimedJob, attempt: () => Promise<FinishedAttempt | 'aborted'>): Promise<FinishedAttempt | 'aborted'> {
  const ctx = storedContext(job.traceparent);
  const span = tracer.startSpan(
    'webhook delivery attempt',
    { attributes: { 'mailroom.webhook.endpoint_id': job.endpoint_id, 'mailroom.event.id': job.event_id, 'mailroom.webhook.attempt': job.attempts + 1 } },
    ctx,
  );
  try {
    const finished = await context.with(trace.setSpan(ctx, span), attempt);
    if (finished === 'aborted') span.setAttribute('mailroom.webhook.outcome', 'aborted');
    else {
      span.setAttributes({ 'mailroom.webhook.outcome': finished.ok ? 'delivered' : 'failed', 'http.response.status_code': finished.httpStatus });
      if (!finished.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: finished.error ?? 'failed' });
    }
    return finished;
  } finally {
    span.end();
  }
}
