/**
 * One attempt of a delivery: sign it both ways (domain/signature.ts), POST it within the
 * deadline (http-client.ts), and say what came of it, with its next attempt time when the
 * retry policy grants one (domain/retry-policy.ts). Nothing here holds or records anything.
 */
import type { Clock, Logger, SecretBox } from '@mailroom/platform';
import type { ClaimedJob, FinishedAttempt } from '../repo/delivery.repository';
import { parseRetryAfter, type RetryPolicy } from '../domain/retry-policy';
import { deliveryHeaders, standardKey } from '../domain/signature';
import type { PostResult } from './http-client';

export interface Poster {
  post(url: string, body: Buffer, headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult>;
}

/** Endpoint secrets opened once (they are sealed at rest), and opened again when an endpoint's sealed secret changes. */
export class Secrets {
  private readonly open = new Map<string, { sealed: Buffer; secret: { text: string; key: Buffer } }>();

  constructor(private readonly box: SecretBox) {}

  of(job: ClaimedJob): { text: string; key: Buffer } {
    const cached = this.open.get(job.endpoint_id);
    if (cached && cached.sealed.equals(job.secret_sealed)) return cached.secret;
    const text = this.box.open(job.secret_sealed, job.endpoint_id).toString('utf8');
    const secret = { text, key: standardKey(text) };
    if (this.open.size > 10_000) this.open.clear();
    this.open.set(job.endpoint_id, { sealed: job.secret_sealed, secret });
    return secret;
  }
}

export interface AttemptDeps {
  http: Poster;
  secrets: Secrets;
  retries: RetryPolicy;
  clock: Clock;
  log: Logger;
  /** Attempt ids that increase in the order attempts start (records list newest first by id). */
  newAttemptId: (ms: number) => string;
}

/** Attempts `job` once; 'aborted' when `signal` cut it short (nothing to record: it is sent again). */
export async function attemptOnce(job: ClaimedJob, d: AttemptDeps, signal: AbortSignal): Promise<FinishedAttempt | 'aborted'> {
  const attempt = job.attempts + 1;
  const at = d.clock.now();
  const timestamp = Math.floor(at.getTime() / 1000);
  let result: PostResult;
  try {
    result = await d.http.post(job.url, job.body, deliveryHeaders(d.secrets.of(job), job.event_id, timestamp, job.body), signal);
  } catch (err) {
    // Not the receiver's fault (e.g. a secret that no longer opens): recorded as a failed attempt, retried on schedule.
    d.log.error({ err, endpoint_id: job.endpoint_id, event_id: job.event_id }, 'could not attempt delivery');
    result = { ok: false, httpStatus: 0, error: 'internal_error', timedOut: false, durationMs: 0 };
  }
  if (result.error === 'aborted') return 'aborted';
  let retryAt: Date | null = null;
  if (!result.ok) {
    const now = d.clock.now();
    const hints = { timedOut: result.timedOut, httpStatus: result.httpStatus, retryAfterSeconds: parseRetryAfter(result.retryAfter, now) };
    const delay = d.retries.delayAfter(attempt, hints, job.max_attempts);
    if (delay !== undefined) retryAt = new Date(now.getTime() + delay);
  }
  return {
    attemptId: d.newAttemptId(at.getTime()),
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
