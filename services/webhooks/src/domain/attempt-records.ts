/**
 * Recording finished attempts, a batch at a time, in one transaction: the rules are here,
 * the queries (one statement each) in repo/delivery.repository.ts.
 * - Only attempts of deliveries the recording instance still holds count: not those of
 *   deliveries taken over since (its lease ran out), and not a batch recorded again because
 *   the answer to its first commit was lost (its deliveries are no longer held). So no
 *   attempt is counted or written twice.
 * - Each endpoint's failure count goes on from its stored count in the order the attempts
 *   finished (a success starts it again); reaching the threshold disables the endpoint
 *   (domain/endpoint-health.ts), gives its attempts no retry and cancels its pending ones.
 * - One row per held attempt of an endpoint still there, announcing its retry unless the
 *   endpoint is disabled; a delivery with a retry is due again then, any other leaves the queue.
 */
import type { EndpointHealthRow, FinishedAttempt, RecordedEndpoint, DeliveryRepository } from '../repo/delivery.repository';
import { AUTO_DISABLE_REASON, disables, failuresAfter } from './endpoint-health';
import type { Transact } from './ports';

/** An endpoint after a batch: its count, whether it is disabled, and whether this batch disabled it. */
export interface EndpointAfter {
  failures: number;
  disabled: boolean;
  disabledNow: boolean;
  /** Its count or state changed (it is written). */
  changed: boolean;
}

/** The endpoints after the held attempts of a batch (in the order they finished). */
export function tally(endpoints: readonly EndpointHealthRow[], held: readonly FinishedAttempt[]): Map<string, EndpointAfter> {
  const after = new Map<string, EndpointAfter>();
  for (const e of endpoints) {
    const outcomes = held.filter((a) => a.job.endpoint_id === e.id).map((a) => a.ok);
    const failures = outcomes.length ? failuresAfter(e.consecutive_failures, outcomes) : e.consecutive_failures;
    const disabledNow = !e.disabled && outcomes.length > 0 && disables(failures);
    after.set(e.id, { failures, disabled: e.disabled || disabledNow, disabledNow, changed: failures !== e.consecutive_failures || disabledNow });
  }
  return after;
}

export type RecordQueries = Pick<DeliveryRepository, 'commitWithoutFlush' | 'lockEndpoints' | 'lockHeld' | 'setHealth' | 'reschedule' | 'finish' | 'insertAttempts' | 'cancelPending'>;

export class AttemptRecords {
  constructor(private readonly d: { transact: Transact; deliveries: RecordQueries }) {}

  /** Records a batch for `owner`; returns the batch's endpoints as they are now (a deleted one is missing). */
  async record(owner: string, batch: readonly FinishedAttempt[], now: Date): Promise<RecordedEndpoint[]> {
    if (batch.length === 0) return [];
    const q = this.d.deliveries;
    const ids = [...new Set(batch.map((a) => a.job.endpoint_id))].sort();
    return this.d.transact(async (trx) => {
      await q.commitWithoutFlush(trx);
      const endpoints = await q.lockEndpoints(ids, trx);
      const stillHeld = new Set(await q.lockHeld(owner, batch.map((a) => a.job.id), trx));
      const held = batch.filter((a) => stillHeld.has(a.job.id));
      const after = tally(endpoints, held);
      await q.setHealth(
        [...after].filter(([, e]) => e.changed).map(([id, e]) => ({ id, failures: e.failures, disable: e.disabledNow })),
        AUTO_DISABLE_REASON,
        now,
        trx,
      );
      const retried = held.filter((a) => a.retryAt !== null && after.get(a.job.endpoint_id)?.disabled === false);
      await q.reschedule(owner, retried.map((a) => ({ jobId: a.job.id, attempt: a.attempt, attemptId: a.attemptId, at: a.retryAt! })), now, trx);
      await q.finish(owner, held.filter((a) => !retried.includes(a)).map((a) => a.job.id), trx);
      await q.insertAttempts(
        held
          .filter((a) => after.has(a.job.endpoint_id))
          .map((a) => ({
            id: a.attemptId,
            job_id: a.job.id,
            endpoint_id: a.job.endpoint_id,
            event_id: a.job.event_id,
            attempt: a.attempt,
            triggered_by: a.trigger,
            status: a.ok ? 'delivered' : 'failed',
            http_status: a.httpStatus,
            error: a.error,
            response_body: a.responseBody,
            duration_ms: a.durationMs,
            created_at: a.at,
            next_attempt_at: after.get(a.job.endpoint_id)!.disabled ? null : a.retryAt,
          })),
        trx,
      );
      await q.cancelPending([...after].filter(([, e]) => e.disabledNow).map(([id]) => id), trx);
      return endpoints.map((e) => {
        const a = after.get(e.id)!;
        return { id: e.id, url: e.url, disabled: a.disabled, disabledNow: a.disabledNow, consecutiveFailures: a.failures };
      });
    });
  }
}
