/**
 * Delivery latency (`processing_time_ms` of message.delivered) as a histogram of fixed
 * buckets, so hours, inboxes and environments add up by adding counts, and percentiles come
 * from the counts. Bucket i holds latencies in (BOUNDS[i-1], BOUNDS[i]] (bucket 0 from 0);
 * the last bucket, past the last bound, holds the rest. Changing the bounds changes the
 * meaning of stored buckets: add a migration that rebuilds them (a replay) if you do.
 */
export const LATENCY_BOUNDS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000] as const;
/** Buckets: one per bound, and one for what is past the last. */
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/** The bucket of a latency. */
export function latencyBucket(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? LATENCY_BOUNDS_MS.length : i;
}

/**
 * The q-quantile (0 < q <= 1) of a histogram (counts by bucket), or null for an empty one:
 * interpolated linearly inside the bucket where the rank falls; in the open last bucket, its
 * lower bound (all that is known of it).
 */
export function quantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const upper = LATENCY_BOUNDS_MS[i];
      if (upper === undefined) return lower;
      return Math.round(lower + ((upper - lower) * (rank - seen)) / n);
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}
