import { z } from 'zod';
import { envInt, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

export const adminConfigSchema = z.object({
  ...baseEnv,
  /** How often audit entries older than a year are deleted. */
  AUDIT_PURGE_INTERVAL_MS: envInt(3_600_000, { min: 1_000 }),
});

export type AdminConfig = z.output<typeof adminConfigSchema>;

export function loadConfig(env: Env): AdminConfig {
  return parseConfig(adminConfigSchema, env);
}
