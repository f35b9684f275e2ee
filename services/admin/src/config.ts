import { z } from 'zod';
import { parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

export const adminConfigSchema = z.object({ ...baseEnv });

export type AdminConfig = z.output<typeof adminConfigSchema>;

export function loadConfig(env: Env): AdminConfig {
  return parseConfig(adminConfigSchema, env);
}
