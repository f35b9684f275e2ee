import { z } from 'zod';
import { parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

export const orgsConfigSchema = z.object({ ...baseEnv });
export type OrgsConfig = z.output<typeof orgsConfigSchema>;

export function loadConfig(env: Env): OrgsConfig {
  return parseConfig(orgsConfigSchema, env);
}
