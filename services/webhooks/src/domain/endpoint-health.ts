/**
 * An endpoint's health: its consecutive failed attempts and when they disable it (spec,
 * sections 3 and 8: 50 consecutive failures). The one place of the threshold, the reason a
 * disabled endpoint shows, and how a run of attempts changes the count.
 */

/** Consecutive failed attempts that disable an endpoint. */
export const FAILURE_THRESHOLD = 50;
export const AUTO_DISABLE_REASON = `disabled after ${FAILURE_THRESHOLD} consecutive failed deliveries`;
export const DISABLED_BY_USER = 'disabled by a user';

/**
 * The consecutive failures after `outcomes` (true: delivered), in the order they finished,
 * starting from `before`: a success starts the count again, each failure adds one.
 */
export function failuresAfter(before: number, outcomes: readonly boolean[]): number {
  let failures = before;
  for (const ok of outcomes) failures = ok ? 0 : failures + 1;
  return failures;
}

/** Whether this many consecutive failures disable the endpoint. */
export function disables(failures: number, threshold = FAILURE_THRESHOLD): boolean {
  return failures >= threshold;
}

export interface EndpointHealth {
  failures: number;
  disabled: boolean;
}

/**
 * An endpoint after a run of attempts (true: delivered) in the order they finished: its
 * count, and whether they disable it (`disabledNow`: it was enabled and the count reached
 * the threshold with at least one of them). A disabled endpoint stays so and keeps counting: only a user enables it.
 */
export function afterAttempts(before: EndpointHealth, outcomes: readonly boolean[], threshold = FAILURE_THRESHOLD): EndpointHealth & { disabledNow: boolean } {
  const failures = failuresAfter(before.failures, outcomes);
  // Only attempts disable: a run with none (a batch recorded again) leaves the endpoint as it was.
  const disabledNow = outcomes.length > 0 && !before.disabled && disables(failures, threshold);
  return { failures, disabled: before.disabled || disabledNow, disabledNow };
}
