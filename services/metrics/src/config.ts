import { z } from 'zod';
import { envInt, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

/** A rate as a fraction between 0 and 1 (0.001 is 0.1%). */
function envRate(defaultValue: number) {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? String(defaultValue) : v))
    .pipe(z.string().regex(/^(0|1)?(\.\d+)?$/, 'must be a fraction between 0 and 1, e.g. 0.001 for 0.1%').transform(Number))
    .pipe(z.number().min(0).max(1));
}

export const metricsConfigSchema = z
  .object({
    ...baseEnv,
    /** A complaint rate above this gives a deliverability warning (0.001: the spec's 0.1%). */
    METRICS_COMPLAINT_RATE_WARNING: envRate(0.001),
    /** A hard-bounce rate above this gives a deliverability warning. */
    METRICS_HARD_BOUNCE_RATE_WARNING: envRate(0.02),
    /** Events one instance holds at once: the most one write (one transaction) can take. */
    METRICS_CONSUMER_CONCURRENCY: envInt(256, { min: 1, max: 1_000 }),
    /** How often the ids of counted events past the stream's age are deleted. */
    METRICS_PRUNE_INTERVAL_MS: envInt(3_600_000, { min: 1_000 }),
  })
  .transform((c) => ({
    ...c,
    settings: { thresholds: { complaintRate: c.METRICS_COMPLAINT_RATE_WARNING, hardBounceRate: c.METRICS_HARD_BOUNCE_RATE_WARNING }, topInboxes: 5 },
  }));

export type MetricsConfig = z.output<typeof metricsConfigSchema>;

export function loadConfig(env: Env): MetricsConfig {
  return parseConfig(metricsConfigSchema, env);
}
