import { z } from 'zod';
import { envInt, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

export const adminConfigSchema = z.object({
  ...baseEnv,
  /** How often audit entries older than a year are deleted. */
  AUDIT_PURGE_INTERVAL_MS: envInt(3_600_000, { min: 1_000 }),
  // Organization exports (issue 28, part 4).
  /** Export jobs one instance runs at once; more wait queued. */
  EXPORT_CONCURRENCY: envInt(2, { min: 1, max: 16 }),
  /** Rows asked of a service per page (memory holds one page at a time). */
  EXPORT_PAGE_SIZE: envInt(100, { min: 1, max: 200 }),
  /** How often the purge runs: expired archives deleted, exports whose instance died failed. */
  EXPORT_SWEEP_INTERVAL_SECONDS: envInt(60, { min: 1, max: 3_600 }),
  /** A queued or running export whose heartbeat is this old is failed by the purge (its instance stopped); heartbeats are sent every quarter of it. */
  EXPORT_STALE_AFTER_SECONDS: envInt(120, { min: 8, max: 86_400 }),
});

export type AdminConfig = z.output<typeof adminConfigSchema>;

export function loadConfig(env: Env): AdminConfig {
  return parseConfig(adminConfigSchema, env);
}
